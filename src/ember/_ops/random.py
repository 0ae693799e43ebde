"""Random numbers: ember.Generator (NumPy's PCG64 on the CPU, CuPy's generator on a GPU), the default generator,
sampling functions and the in-place Tensor samplers.

Same seed, same numbers; the numbers themselves differ from torch's (torch uses a Mersenne Twister).
"""
import builtins
import math
import os
import sys

import numpy as np

from .. import _dtype
from .._backend import XP, default_device, module_for
from .._device import device as _device
from .._dtype import FROM_NP, get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD
from ..autograd.graph import bump_version
from ._dispatch import Op, dispatch
from ._inplace import check_leaf, commit, view_needs_grad
from .creation import _check_dtype, _filled, _scalar_name, like_order, relaid, size_args

__all__ = [
    "Generator",
    "bernoulli",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
]

_DEFAULT_SEED = 67280421310721  # torch's seed for a new Generator
_STATE_BYTES = 56  # seed, PCG64 state and increment, the cached 32-bit half


def _seed_value(seed, fname="manual_seed"):
    """seed as torch stores it: a 64-bit unsigned value (negative seeds wrap)."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, (builtins.float, np.floating)) or not isinstance(seed, (builtins.int, np.integer)):
        raise RuntimeError(f"{fname} expected a long, but got {type(seed).__name__}")  # noqa: TRY004 - torch's type
    seed = builtins.int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2 ** 64


_NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class _CPUEngine:
    """NumPy sampling behind a Generator: each method returns a NumPy array of the requested NumPy dtype."""
    __slots__ = ("g",)
    xp = np

    def __init__(self, seed):
        self.g = np.random.Generator(np.random.PCG64(seed))

    def fill(self, kind, d):
        """Sample straight into d (contiguous float32/float64); False where that is not possible."""
        if d.dtype not in _NATIVE_FLOATS or not d.flags.c_contiguous or not d.flags.writeable:
            return False
        if kind == "uniform":
            self.g.random(out=d, dtype=d.dtype)
        else:
            self.g.standard_normal(out=d, dtype=d.dtype)
        return True

    def uniform(self, shape, dt):
        return self.g.random(shape, dt if dt in (np.float32, np.float64) else np.float64)

    def keep(self, shape, p):
        """A boolean mask of `shape`, each element True with probability 1 - p (0 <= p < 1): dropout's.

        NOTE [ Dropout masks from 16 bits ]
        Dropout draws millions of elements per step; a float32 uniform per element costs about 1.9 ns here, 16
        raw bits 0.4 ns. An element keeps when its 16 bits u fall below k = floor(q * 2^16) (q = 1 - p); the
        elements that draw exactly k (1 in 65536) decide with 32 more bits against the rest of q, so the mask is
        Bernoulli(q) to 2^-48, finer than a float32 uniform's 2^-24."""
        n = math.prod(shape)
        q = 1.0 - p
        k, rest = divmod(q * 65536.0, 1.0)
        raw = self.g.bit_generator.random_raw((n + 3) // 4)
        u = raw.view(np.uint16)[:n]
        k = np.uint16(k)
        keep = u < k
        tie = np.flatnonzero(u == k)
        if tie.size:
            extra = self.g.bit_generator.random_raw(tie.size) >> np.uint64(32)
            keep[tie] = extra < np.uint64(int(rest * 4294967296.0))
        return keep.reshape(shape)

    def normal(self, shape, dt):
        return self.g.standard_normal(shape, dt if dt in (np.float32, np.float64) else np.float64)

    def integers(self, low, high, shape):
        return self.g.integers(low, high, shape, dtype=np.int64)

    def permutation(self, n):
        return self.g.permutation(n)

    def exponential(self, shape, dt):
        return self.g.standard_exponential(shape, dt if dt in (np.float32, np.float64) else np.float64)

    def geometric(self, p, shape):
        return self.g.geometric(p, shape)

    def cauchy(self, shape):
        return self.g.standard_cauchy(shape)

    def poisson(self, lam):
        return self.g.poisson(lam)

    def get_state(self):
        st = self.g.bit_generator.state
        s = st["state"]
        return (s["state"].to_bytes(16, "little") + s["inc"].to_bytes(16, "little")
                + builtins.int(st["has_uint32"]).to_bytes(8, "little") + builtins.int(st["uinteger"]).to_bytes(8, "little"))

    def set_state(self, b):
        self.g.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": builtins.int.from_bytes(b[:16], "little"), "inc": builtins.int.from_bytes(b[16:32], "little")},
            "has_uint32": builtins.int.from_bytes(b[32:40], "little"), "uinteger": builtins.int.from_bytes(b[40:48], "little")}


class _CUDAEngine:
    """CuPy sampling on one GPU (cupy.random.RandomState, seeded like the CPU engine)."""
    __slots__ = ("calls", "g", "index", "seed", "xp")

    def __init__(self, seed, index):
        cp = module_for(_device("cuda", index))
        self.xp, self.index, self.seed, self.calls = cp, index, seed, 0
        with cp.cuda.Device(index):
            self.g = cp.random.RandomState(seed)

    def _f(self, dt):
        return dt if dt in (np.float32, np.float64) else np.float64

    def keep(self, shape, p):
        """A boolean mask of `shape`, each element True with probability 1 - p: a float32 uniform per element."""
        return self.uniform(shape, np.float32) >= p

    def fill(self, kind, d):
        return False

    def uniform(self, shape, dt):
        return self.g.random_sample(shape, self._f(dt))

    def normal(self, shape, dt):
        return self.g.standard_normal(shape, self._f(dt))

    def integers(self, low, high, shape):
        return self.g.randint(low, high, shape, dtype=np.int64)

    def permutation(self, n):
        return self.g.permutation(n)

    def exponential(self, shape, dt):
        return self.g.standard_exponential(shape, self._f(dt))

    def geometric(self, p, shape):
        return self.g.geometric(p, shape)

    def cauchy(self, shape):
        return self.g.standard_cauchy(shape)

    def poisson(self, lam):
        return self.g.poisson(lam)

    def get_state(self):
        raise RuntimeError("get_state is not supported for CUDA generators in ember; re-seed with manual_seed")

    def set_state(self, b):
        raise RuntimeError("set_state is not supported for CUDA generators in ember; re-seed with manual_seed")


class Generator:
    """Same as `torch.Generator`: get_state() is a uint8 tensor of ember's own layout (not torch's 5056 bytes)."""
    __slots__ = ("__weakref__", "_engine", "_seed", "device")

    def __init__(self, device="cpu"):
        dev = _device(device)
        if dev.type == "cuda" and dev.index is None:
            dev = _device("cuda", _current_cuda_index())
        self.device = dev
        self._seed = _DEFAULT_SEED
        self._engine = None

    def _eng(self):
        e = self._engine
        if e is None:
            e = self._engine = _CPUEngine(self._seed) if self.device.type == "cpu" else \
                _CUDAEngine(self._seed, self.device.index)
        return e

    def manual_seed(self, seed):
        """Same as `torch.Generator.manual_seed`: returns self."""
        self._seed = _seed_value(seed)
        self._engine = None
        return self

    def seed(self):
        """Same as `torch.Generator.seed`: a fresh non-deterministic seed, returned."""
        self.manual_seed(builtins.int.from_bytes(os.urandom(8), "little") & (2 ** 63 - 1))
        return self._seed

    def initial_seed(self):
        """Same as `torch.Generator.initial_seed`."""
        return self._seed

    def get_state(self):
        """Same as `torch.Generator.get_state`: a uint8 CPU tensor."""
        b = self._seed.to_bytes(8, "little") + self._eng().get_state()
        return Tensor._make(np.frombuffer(b, np.uint8).copy())

    def set_state(self, new_state):
        """Same as `torch.Generator.set_state`."""
        if not isinstance(new_state, Tensor):
            from .unary import py_typename
            raise TypeError(f"expected a ember.ByteTensor, but got {py_typename(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a ember.ByteTensor")
        d = new_state._data if new_state._data.__class__ is np.ndarray else new_state._data.get()
        if d.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {d.size}")
        b = d.tobytes()
        self._seed = builtins.int.from_bytes(b[:8], "little")
        self._engine = None
        self._eng().set_state(b[8:])
        return self

    def __reduce__(self):
        state = self.get_state()._data.tobytes() if self.device.type == "cpu" else None
        return (_rebuild_generator, (str(self.device), self._seed, state))

    def __repr__(self):
        return f"<ember.Generator object at {id(self):#x}>"


def _rebuild_generator(dev, seed, state):
    g = Generator(dev).manual_seed(seed)
    if state is not None:
        g.set_state(Tensor._make(np.frombuffer(state, np.uint8).copy()))
    return g


def _current_cuda_index():
    if "cupy" not in sys.modules:
        return 0
    return sys.modules["cupy"].cuda.runtime.getDevice()


# torch seeds its default generator non-deterministically at start-up
default_generator = Generator()
default_generator.seed()
_cuda_generators = {}


def default_cuda_generator(index=None):
    """The default generator of one GPU (ember.cuda's default_generators)."""
    index = _current_cuda_index() if index is None else index
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(_device("cuda", index))
        g.manual_seed(default_generator.initial_seed())
    return g


def manual_seed(seed):
    """Same as `torch.manual_seed`: seeds the CPU generator (and the GPU ones when CuPy is loaded)."""
    seed = _seed_value(builtins.int(seed))  # as torch: int() first, so "1", 2.7 and 1-element tensors are seeds
    if "cupy" in sys.modules:
        cuda = sys.modules.get("ember.cuda")
        if cuda is not None and hasattr(cuda, "manual_seed_all"):
            cuda.manual_seed_all(seed)
        else:
            for g in _cuda_generators.values():
                g.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed():
    """Same as `torch.seed`: re-seeds non-deterministically and returns the seed."""
    s = default_generator.seed()
    for g in _cuda_generators.values():
        g.manual_seed(s)
    return s


def initial_seed():
    """Same as `torch.initial_seed`."""
    return default_generator.initial_seed()


def get_rng_state():
    """Same as `torch.get_rng_state`."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Same as `torch.set_rng_state`."""
    default_generator.set_state(new_state)


class fork_rng:
    """Same as `torch.random.fork_rng`: restores the CPU (and given GPU) generators' states on exit."""

    def __init__(self, devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
        self.enabled = enabled
        self.devices = list(devices or [])

    def __enter__(self):
        if self.enabled:
            self.cpu = default_generator.get_state()
            self.gpu = {i: default_cuda_generator(i).initial_seed() for i in self.devices}

    def __exit__(self, *exc):
        if self.enabled:
            default_generator.set_state(self.cpu)
            for i, s in self.gpu.items():
                default_cuda_generator(i).manual_seed(s)
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


# ----- helpers -----

def _engine(generator, dev):
    """The sampling engine for a device: generator's, or the device's default generator's."""
    if generator is None:
        if dev.type == "cpu":
            return default_generator._eng()
        return default_cuda_generator(dev.index)._eng()
    if not isinstance(generator, Generator):
        raise TypeError(f"expected ember.Generator as generator, got {type(generator).__name__}")
    if generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found '{generator.device.type}'")
    return generator._eng()


def _dev_of(device):
    if device is None:
        return default_device()
    dev = _device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = _device("cuda", _current_cuda_index())
    return dev


def _num(v):
    """A number as torch prints it in messages (C++ stream formatting)."""
    return f"{v:g}" if isinstance(v, builtins.float) else str(v)


def _float_dtype(dtype, kernel):
    dt = dtype or get_default_dtype()
    if dt._cat not in (_dtype._FLOAT, _dtype._COMPLEX):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(dt)}'")
    return dt


def _sample(eng, kind, shape, dt):
    """Uniform [0, 1) or standard normal samples of ember dtype dt (complex: independent parts; a complex
    normal has variance 1 in total, as torch's)."""
    f = getattr(eng, kind)
    if dt._cat == _dtype._COMPLEX:
        rt = dt.to_real().np
        z = f(shape + (2,), rt.type)
        if kind == "normal":
            z *= rt.type(np.sqrt(0.5))
        return eng.xp.ascontiguousarray(z).view(dt.np)[..., 0]
    a = f(shape, dt.np.type)
    return a if a.dtype == dt.np else a.astype(dt.np)


def _new_random(arr, out, requires_grad, name):
    t = Tensor._make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    if out is not None:
        from ._inplace import write_out
        return write_out(t, out, name)
    return t


# ----- sampling functions -----

def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Same as `torch.rand`."""
    _check_dtype(dtype, "rand")
    dt = _float_dtype(dtype or (out.dtype if out is not None else None), "check_uniform_bounds")
    dev = _dev_of(device if out is None else out.device)
    eng = _engine(generator, dev)
    size = args if size is None else (size,)
    return _new_random(_sample(eng, "uniform", size_args(size, "rand"), dt), out, requires_grad, "rand")


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Same as `torch.randn`."""
    _check_dtype(dtype, "randn")
    dt = _float_dtype(dtype or (out.dtype if out is not None else None), "normal_kernel_cpu")
    dev = _dev_of(device if out is None else out.device)
    eng = _engine(generator, dev)
    size = args if size is None else (size,)
    return _new_random(_sample(eng, "normal", size_args(size, "randn"), dt), out, requires_grad, "randn")


def _check_int_arg(v, name, pos):
    if isinstance(v, Tensor) and v._data.size == 1:
        v = v.item()
    if isinstance(v, builtins.bool) or not isinstance(v, (builtins.int, np.integer)):
        raise TypeError(f"randint(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    v = builtins.int(v)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _random_bounds(low, high, dt, name="random_"):
    """Checks [low, high) for sampling integers stored in dt, with torch's messages."""
    if low >= high:
        raise RuntimeError(f"{name} expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt._cat == _dtype._INT:
        lo, hi = np.iinfo(dt.np).min, np.iinfo(dt.np).max
        cname = {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
                 "int64": "long"}[dt.name]
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {cname}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {cname}")


def _integers(eng, low, high, shape, dt):
    a = eng.integers(low, high, shape)
    return a if dt.np == np.int64 else a.astype(dt.np)


def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """Same as `torch.randint`: randint(high, size) or randint(low, high, size); int64 unless dtype is given."""
    _check_dtype(dtype, "randint")
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif args:
        raise TypeError("randint() received an invalid combination of arguments")
    if high is None or size is None:
        if len(args) == 2 and size is None:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(args[1]).__name__}")
        raise TypeError("randint() received an invalid combination of arguments - expected (int high, tuple of ints "
                        "size) or (int low, int high, tuple of ints size)")
    low = 0 if low is None else _check_int_arg(low, "low", 1)
    high = _check_int_arg(high, "high", 2 if len(args) == 2 else 1)
    dt = dtype or (out.dtype if out is not None else _dtype.int64)
    _random_bounds(low, high, dt)
    dev = _dev_of(device if out is None else out.device)
    eng = _engine(generator, dev)
    arr = _integers(eng, low, high, size_args((size,), "randint"), dt)
    if requires_grad and dt._cat not in (_dtype._FLOAT, _dtype._COMPLEX):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return _new_random(arr, out, requires_grad, "randint")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """Same as `torch.randperm`: int64 unless dtype is given."""
    _check_dtype(dtype, "randperm")
    n = builtins.int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = dtype or (out.dtype if out is not None else _dtype.int64)
    if dt._cat == _dtype._INT and n > 0 and n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(f"n must be strictly less than or equal to {np.iinfo(dt.np).max + 1}")
    dev = _dev_of(device if out is None else out.device)
    eng = _engine(generator, dev)
    arr = eng.permutation(n).astype(dt.np)
    return _new_random(arr, out, requires_grad, "randperm")


# NOTE [ Gradients of sampling ops ]
# torch defines the gradient of normal/bernoulli/poisson and of the in-place samplers as zero for every input
# (no reparameterization); the ops below record nodes with torch's names that return zeros.

def _zero_grads(ctx, g):
    dev = g.device
    return tuple(_filled(0, shape, FROM_NP[npdt], dev, False) if need else None
                 for (shape, npdt), need in zip(ctx._meta, ctx.needs_input_grad))


def _sampled_op(node_name):
    # the last attribute is the sampling function (it holds the generator)
    return Op("sample", lambda *a: a[-1](*a[:-1]), _zero_grads, node_name=node_name)


_NORMAL_TT, _NORMAL_TF, _NORMAL_FT = _sampled_op("NormalBackward3"), _sampled_op("NormalBackward1"), \
    _sampled_op("NormalBackward2")
_BERNOULLI = _sampled_op("BernoulliBackward0")
_POISSON = _sampled_op("PoissonBackward0")


def _check_std(std):
    if isinstance(std, Tensor):
        if std._data.size and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _normal_of(eng, dt):
    """mean + std * N(0, 1) over broadcast arrays, in ember dtype dt."""
    def fwd(mean, std):
        shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
        z = _sample(eng, "normal", shape, dt)
        return (z * std + mean).astype(dt.np, copy=False)
    return fwd


def normal(mean=None, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Same as `torch.normal`: (Tensor mean, Tensor or float std), (float mean, Tensor std) or
    (float mean, float std, size)."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None or mean is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got ({type(mean).__name__}, "
                            f"{type(std).__name__}), but expected (Tensor mean, Tensor std), (Tensor mean, float std), "
                            f"(float mean, Tensor std) or (float mean, float std, tuple of ints size)")
        _check_dtype(dtype, "normal")
        _check_std(std)
        dt = _float_dtype(dtype or (out.dtype if out is not None else None), "normal_kernel_cpu")
        dev = _dev_of(device if out is None else out.device)
        eng = _engine(generator, dev)
        z = _sample(eng, "normal", size_args((size,), "normal"), dt)
        arr = (z * std + mean).astype(dt.np, copy=False) if z.size else z
        return _new_random(arr, out, requires_grad, "normal")
    ref = mean if mt else std
    dt = _float_dtype(FROM_NP[ref._data.dtype], "normal_kernel_cpu")
    _check_std(std)
    eng = _engine(generator, ref.device)
    fwd = _normal_of(eng, dt)
    if mt and st:
        r = dispatch(_NORMAL_TT, (mean, std), fwd)
    elif mt:
        r = dispatch(_NORMAL_TF, (mean,), std, fwd)
    else:
        r = dispatch(_NORMAL_FT, (std,), mean, _swap(fwd))
    return r if out is None else _write(r, out, "normal")


def _swap(fwd):
    return lambda std, mean: fwd(mean, std)


def _write(r, out, name):
    from ._inplace import write_out
    if name == "multinomial" and out.dtype != _dtype.int64:  # torch refuses rather than casts the indices
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_scalar_name(out.dtype)}")
    return write_out(r, out, name)


def _check_prob_tensor(p):
    d = p._data
    if d.size and ((d < 0).any() or (d > 1).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Same as `torch.bernoulli`: samples 0/1 with probabilities `input` (or p), in input's dtype."""
    dt = FROM_NP[input._data.dtype]
    if dt._cat not in (_dtype._FLOAT,):
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_scalar_name(dt)}'")
    eng = _engine(generator, input.device)
    if p is not None:
        _check_prob_scalar(p, "bernoulli")
        arr = (_sample(eng, "uniform", input._data.shape, _dtype.float64) < p).astype(dt.np)
        r = Tensor._make(arr)
    else:
        _check_prob_tensor(input)

        def fwd(x):
            return (_sample(eng, "uniform", x.shape, _dtype.float64) < x).astype(x.dtype)
        r = dispatch(_BERNOULLI, (input,), fwd)
    return r if out is None else _write(r, out, "bernoulli")


def _check_prob_scalar(p, name):
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name}_ expects p to be in [0, 1], but got p={_num(p)}")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Same as `torch.multinomial`: int64 indices; without replacement, no index repeats within a row."""
    d = input._data
    if d.dtype.kind not in "fV":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_scalar_name(FROM_NP[d.dtype])}")
    if d.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = d.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    xp = XP[d.__class__]
    p = d.reshape(-1, n).astype(np.float64)
    if not bool(xp.isfinite(p).all()) or bool((p < 0).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool((p.sum(axis=1) <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    eng = _engine(generator, input.device)
    idx = _with_replacement(eng, xp, p, num_samples) if replacement else _without_replacement(eng, xp, p, num_samples)
    r = Tensor._make(idx.reshape(d.shape[:-1] + (num_samples,)))
    return r if out is None else _write(r, out, "multinomial")


def _with_replacement(eng, xp, p, k):
    # inverse CDF per row; rows are shifted by their index so one searchsorted serves all of them
    rows = p.shape[0]
    cdf = xp.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    shift = xp.arange(rows, dtype=np.float64)[:, None]
    u = eng.uniform((rows, k), np.float64) + shift
    idx = xp.searchsorted((cdf + shift).ravel(), u.ravel(), side="right").reshape(rows, k)
    idx -= (xp.arange(rows) * p.shape[1])[:, None]
    return xp.minimum(idx, p.shape[1] - 1).astype(np.int64)


def _without_replacement(eng, xp, p, k):
    # the exponential race: index i wins with probability p_i / sum(p) among those left (as torch samples)
    q = eng.exponential(p.shape, np.float64)
    with np.errstate(divide="ignore"):
        keys = p / q
    return xp.argsort(-keys, axis=1, kind="stable")[:, :k].astype(np.int64)


def poisson(input, generator=None):
    """Same as `torch.poisson`."""
    dt = FROM_NP[input._data.dtype]
    if dt._cat != _dtype._FLOAT:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_scalar_name(dt)}'")
    if input._data.size and bool((input._data < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    eng = _engine(generator, input.device)
    return dispatch(_POISSON, (input,), lambda x: eng.poisson(x.astype(np.float64)).astype(x.dtype))


def _like(sample, input, memory_format, name, requires_grad, *args, **kwargs):
    """sample(*args, shape, **kwargs) laid out as torch lays out a *_like result (see NOTE [ Memory formats of
    *_like results ] in creation.py): samples are drawn in memory order."""
    order = None if memory_format is None and input._data.flags.c_contiguous else \
        like_order(input, memory_format, name)
    shape = input._data.shape
    if order is None:
        return sample(*args, shape, requires_grad=requires_grad, **kwargs)
    return relaid(sample(*args, [shape[p] for p in order], requires_grad=False, **kwargs), order, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.rand_like`."""
    return _like(rand, input, memory_format, "rand_like", requires_grad, dtype=dtype or input.dtype,
                 device=device if device is not None else input.device)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.randn_like`."""
    return _like(randn, input, memory_format, "randn_like", requires_grad, dtype=dtype or input.dtype,
                 device=device if device is not None else input.device)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    """Same as `torch.randint_like`: randint_like(input, high) or randint_like(input, low, high)."""
    if high is None:
        low, high = 0, low
    return _like(randint, input, memory_format, "randint_like", requires_grad, low, high,
                 dtype=dtype or input.dtype, device=device if device is not None else input.device)


# ----- in-place samplers -----

def _fill_random(self, arr, name, node_name):
    """Write samples into self (a no-grad fast path; otherwise a node with zero gradient, as torch records)."""
    d = self._data
    if arr.dtype != d.dtype:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(d.dtype)
    if self._base is not None and view_needs_grad(self):  # a view made under no_grad of a base in the graph
        check_leaf(self)
    if GRAD[0] and self._requires_grad:
        check_leaf(self)
        src = Tensor._make(self._data)
        src._requires_grad, src._grad_fn, src._output_nr, src._accum = True, self._grad_fn, self._output_nr, \
            self._accum
        commit(self, dispatch(_INPLACE_OPS[node_name], (src,), lambda x: arr), name)
        return self
    d[...] = arr
    bump_version(self, name)
    return self


_INPLACE_OPS = {n: _sampled_op(n) for n in ("UniformBackward0", "NormalBackward0", "BernoulliBackward1",
                                            "BernoulliBackward2", "RandomBackward0", "RandomBackward1",
                                            "RandomBackward2", "ExponentialBackward0", "GeometricBackward0",
                                            "CauchyBackward0", "LogNormalBackward0")}


def _float_self(self, kernel):
    return _float_dtype(FROM_NP[self._data.dtype], kernel)


def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """Same as `torch.Tensor.uniform_` (`from` may be passed by keyword)."""
    from_ = kwargs.pop("from", from_)
    dt = _float_self(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > "
                           f"to={_num(to)}")
    eng = _engine(generator, self.device)
    d = self._data
    if self._base is not None and view_needs_grad(self):  # a view made under no_grad of a base in the graph
        check_leaf(self)
    if not (GRAD[0] and self._requires_grad) and eng.fill("uniform", d):  # the nn.init path: no temporaries
        if (from_, to) != (0, 1):
            d *= to - from_
            d += from_
        bump_version(self, "uniform_")
        return self
    u = _sample(eng, "uniform", d.shape, dt)
    arr = u * (to - from_) + from_ if (from_, to) != (0, 1) else u
    return _fill_random(self, arr, "uniform_", "UniformBackward0")


def normal_(self, mean=0, std=1, *, generator=None):
    """Same as `torch.Tensor.normal_`."""
    dt = _float_self(self, "normal_kernel_cpu")
    _check_std(std)
    eng = _engine(generator, self.device)
    d = self._data
    if self._base is not None and view_needs_grad(self):  # a view made under no_grad of a base in the graph
        check_leaf(self)
    if not (GRAD[0] and self._requires_grad) and eng.fill("normal", d):
        if (mean, std) != (0, 1):
            d *= std
            d += mean
        bump_version(self, "normal_")
        return self
    z = _sample(eng, "normal", d.shape, dt)
    arr = z * std + mean if (mean, std) != (0, 1) else z
    return _fill_random(self, arr, "normal_", "NormalBackward0")


def bernoulli_(self, p=0.5, *, generator=None):
    """Same as `torch.Tensor.bernoulli_`: p a float or a tensor broadcastable to self."""
    eng = _engine(generator, self.device)
    u = _sample(eng, "uniform", self._data.shape, _dtype.float64)
    if isinstance(p, Tensor):
        _check_prob_tensor(p)
        arr = u < p._data
        name = "BernoulliBackward1"
    else:
        _check_prob_scalar(p, "bernoulli")
        arr = u < p
        name = "BernoulliBackward2"
    return _fill_random(self, arr, "bernoulli_", name)


def _default_random_range(dt):
    """random_() with no bounds: [0, 2^mantissa] for floats (every integer exactly representable), [0, max] for
    integer types."""
    if dt._cat == _dtype._BOOL:
        return 0, 2
    if dt._cat == _dtype._FLOAT:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dt.name]
        return 0, 2 ** digits + 1
    return 0, builtins.int(np.iinfo(dt.np).max) + 1


def random_(self, from_=None, to=None, *, generator=None, **kwargs):
    """Same as `torch.Tensor.random_`: random_(), random_(to) or random_(from, to)."""
    from_ = kwargs.pop("from", from_)
    dt = FROM_NP[self._data.dtype]
    if from_ is None and to is None:
        low, high = _default_random_range(dt)
        node = "RandomBackward0"
    elif to is None:
        low, high = 0, builtins.int(from_)
        node = "RandomBackward1"
        if high <= 0:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from=0 >= to={high}")
    else:
        low, high = builtins.int(from_), builtins.int(to)
        node = "RandomBackward2"
        _random_bounds(low, high, dt)
    eng = _engine(generator, self.device)
    return _fill_random(self, eng.integers(low, high, self._data.shape), "random_", node)


def exponential_(self, lambd=1, *, generator=None):
    """Same as `torch.Tensor.exponential_`."""
    dt = _float_self(self, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    eng = _engine(generator, self.device)
    e = eng.exponential(self._data.shape, dt.np.type)
    return _fill_random(self, e / lambd if lambd != 1 else e, "exponential_", "ExponentialBackward0")


def geometric_(self, p, *, generator=None):
    """Same as `torch.Tensor.geometric_`: the number of trials up to the first success (values >= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    eng = _engine(generator, self.device)
    return _fill_random(self, eng.geometric(p, self._data.shape), "geometric_", "GeometricBackward0")


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Same as `torch.Tensor.cauchy_`."""
    _float_self(self, "cauchy_cpu")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    eng = _engine(generator, self.device)
    return _fill_random(self, eng.cauchy(self._data.shape) * sigma + median, "cauchy_", "CauchyBackward0")


def log_normal_(self, mean=1, std=2, *, generator=None):
    """Same as `torch.Tensor.log_normal_`: exp of N(mean, std) samples."""
    _float_self(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    eng = _engine(generator, self.device)
    z = eng.normal(self._data.shape, np.float64)
    xp = XP[z.__class__]
    with np.errstate(over="ignore"):
        arr = xp.exp(z * std + mean)
    return _fill_random(self, arr, "log_normal_", "LogNormalBackward0")


Tensor.uniform_ = uniform_
Tensor.normal_ = normal_
Tensor.bernoulli_ = bernoulli_
Tensor.random_ = random_
Tensor.exponential_ = exponential_
Tensor.geometric_ = geometric_
Tensor.cauchy_ = cauchy_
Tensor.log_normal_ = log_normal_
Tensor.bernoulli = bernoulli
Tensor.multinomial = multinomial
