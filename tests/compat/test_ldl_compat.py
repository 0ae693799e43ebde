"""linalg.ldl_factor(_ex) and linalg.ldl_solve against torch: LD, pivots, info, solutions, return types, errors and
the missing derivative."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_DTYPES = ["float32", "float64", "complex64", "complex128"]
_ATOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def _input(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)  # not symmetric: both read only the lower triangle


def _same(got, want, atol=0):
    assert type(got).__name__ == type(want).__name__
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1] and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=atol)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (8, 8), (33, 33), (2, 3, 5, 5), (0, 0), (0, 4, 4), (2, 0, 0)])
def test_factor(dtype, hermitian, shape):
    a = _input(np.random.default_rng(0), shape, dtype)
    want = torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=hermitian)
    got = ember.linalg.ldl_factor_ex(ember.from_numpy(a), hermitian=hermitian)
    _same(got, want, _ATOL[dtype] * max(shape[-1], 1))
    want = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
    _same(ember.linalg.ldl_factor(ember.from_numpy(a), hermitian=hermitian), want, _ATOL[dtype] * max(shape[-1], 1))


def test_singular_info():
    a = np.zeros((3, 4, 4))
    a[0] = np.eye(4)
    a[2, 1:, 1:] = [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    _same(ember.linalg.ldl_factor_ex(ember.from_numpy(a)), torch.linalg.ldl_factor_ex(torch.from_numpy(a)))
    for name, kw in (("ldl_factor", {}), ("ldl_factor_ex", {"check_errors": True})):
        with pytest.raises(RuntimeError) as want:
            getattr(torch.linalg, name)(torch.from_numpy(a), **kw)
        with pytest.raises(RuntimeError) as got:
            getattr(ember.linalg, name)(ember.from_numpy(a), **kw)
        assert str(want.value).endswith(str(got.value))  # torch's message starts with an internal assert's text


# torch 2.13 crashes (segfault) when LD has batch dimensions that B broadcasts beyond, so those are left out here
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("ld_batch,b_batch", [((), ()), ((), (3,)), ((), (2, 3)), ((3,), (3,)), ((3,), ()),
                                              ((3,), (1,))])
def test_solve(dtype, hermitian, ld_batch, b_batch):
    rng = np.random.default_rng(1)
    a, b = _input(rng, ld_batch + (6, 6), dtype), _input(rng, b_batch + (6, 2), dtype)
    LD, piv = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
    want = torch.linalg.ldl_solve(LD, piv, torch.from_numpy(b), hermitian=hermitian)
    got = ember.linalg.ldl_solve(ember.from_numpy(LD.numpy()), ember.from_numpy(piv.numpy()), ember.from_numpy(b),
                                 hermitian=hermitian)
    _same((got,), (want,), _ATOL[dtype] * 100)


def _both(fn):
    """(exception type name, message) of fn(lib) for torch and for ember."""
    out = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as e:
            fn(lib)
        out.append((type(e.value).__name__, str(e.value)))
    return out


def _ld(lib, dtype="float64", batch=()):
    a = lib.tensor([[2., 1.], [1., 3.]], dtype=getattr(lib, dtype)).expand(batch + (2, 2))
    return lib.linalg.ldl_factor(a)


_BAD = {
    "vector": lambda lib: lib.linalg.ldl_factor(lib.ones(3)),
    "scalar": lambda lib: lib.linalg.ldl_factor_ex(lib.tensor(1.)),
    "not square": lambda lib: lib.linalg.ldl_factor(lib.ones(3, 4)),
    "int": lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.int32)),
    "bool": lambda lib: lib.linalg.ldl_factor_ex(lib.ones(3, 3, dtype=lib.bool)),
    "half": lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.float16)),
    "bfloat16": lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.bfloat16)),
    "solve LD vector": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0][0], _ld(lib)[1], lib.ones(2, 1).double()),
    "solve LD not square": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0][:1], _ld(lib)[1], lib.ones(2, 1).double()),
    "solve LD int": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0].int(), _ld(lib)[1], lib.ones(2, 1).int()),
    "solve B dtype": lambda lib: lib.linalg.ldl_solve(*_ld(lib), lib.ones(2, 1)),
    "solve B complex": lambda lib: lib.linalg.ldl_solve(*_ld(lib), lib.ones(2, 1).cdouble()),
    "solve B vector": lambda lib: lib.linalg.ldl_solve(*_ld(lib), lib.ones(2).double()),
    "solve B scalar": lambda lib: lib.linalg.ldl_solve(*_ld(lib), lib.tensor(1.).double()),
    "solve B rows": lambda lib: lib.linalg.ldl_solve(*_ld(lib), lib.ones(3, 1).double()),
    "solve pivots shape": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0], _ld(lib)[1][:1], lib.ones(2, 1).double()),
    "solve pivots float": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0], _ld(lib)[1].float(), lib.ones(2, 1).double()),
    "solve pivots bool": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0], _ld(lib)[1].bool(), lib.ones(2, 1).double()),
    "solve broadcast": lambda lib: lib.linalg.ldl_solve(*_ld(lib, batch=(3,)), lib.ones(2, 2, 1).double()),
    "solve pivot 0": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0], lib.zeros(2, dtype=lib.int32),
                                                      lib.ones(2, 1).double()),
    "solve pivot big": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0], lib.full((2,), -3, dtype=lib.int64),
                                                        lib.ones(2, 1).double()),
    "solve half": lambda lib: lib.linalg.ldl_solve(_ld(lib)[0].half(), _ld(lib)[1], lib.ones(2, 1).half()),
    "out dtype": lambda lib: lib.linalg.ldl_factor(_ld(lib)[0], out=(lib.empty(0, dtype=lib.float32),
                                                                     lib.empty(0, dtype=lib.int32))),
    "out pivots dtype": lambda lib: lib.linalg.ldl_factor(_ld(lib)[0], out=(lib.empty(0, dtype=lib.float64),
                                                                            lib.empty(0, dtype=lib.int64))),
    "out count": lambda lib: lib.linalg.ldl_factor(_ld(lib)[0], out=(lib.empty(0, dtype=lib.float64),) * 3),
    "out requires grad": lambda lib: lib.linalg.ldl_factor_ex(
        _ld(lib)[0], out=(lib.empty(0, dtype=lib.float64, requires_grad=True), lib.empty(0, dtype=lib.int32),
                          lib.empty(0, dtype=lib.int32))),
    "solve out requires grad": lambda lib: lib.linalg.ldl_solve(
        *_ld(lib), lib.ones(2, 1).double(), out=lib.empty(0, dtype=lib.float64, requires_grad=True)),
}


@pytest.mark.parametrize("case", list(_BAD))
def test_errors(case):
    want, got = _both(_BAD[case])
    assert got == want


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_out(dtype):
    rng = np.random.default_rng(2)
    a, b = _input(rng, (2, 4, 4), dtype), _input(rng, (2, 4, 3), dtype)
    res = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        outs = (lib.empty(0, dtype=dt), lib.empty(0, dtype=lib.int32), lib.empty(0, dtype=lib.int32))
        lib.linalg.ldl_factor_ex(lib.from_numpy(a), out=outs)
        x = lib.empty(0, dtype=dt)
        lib.linalg.ldl_solve(outs[0], outs[1], lib.from_numpy(b), out=x)
        res.append([o.numpy() for o in outs + (x,)])
    for w, g in zip(*res):
        np.testing.assert_allclose(g, w, atol=1e-10)


def test_no_derivative():
    a = np.array([[2., 1.], [1., 3.]])
    b = np.ones((2, 1))
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        f = lib.linalg.ldl_factor_ex(x)
        flags = [t.requires_grad for t in f] + [t.requires_grad for t in lib.linalg.ldl_factor(x)]
        with pytest.raises(RuntimeError) as e1:
            f.LD.sum().backward()
        y = lib.linalg.ldl_solve(f.LD.detach(), f.pivots, lib.tensor(b, requires_grad=True))
        flags.append(y.requires_grad)
        with pytest.raises(RuntimeError) as e2:
            y.sum().backward()
        y = lib.linalg.ldl_solve(f.LD, f.pivots, lib.tensor(b))
        flags.append(y.requires_grad)
        res.append((flags, str(e1.value), str(e2.value)))
    assert res[0] == res[1]
