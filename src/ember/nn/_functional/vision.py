"""nn.functional: interpolation, pixel/channel shuffles, grid sampling.

Every interpolation mode is separable: along each spatial axis the output is a fixed linear map of the input, so
one Op (pooling.separable_op) applies a small (out x in) matrix per axis and its backward applies the
transposes. The matrices follow torch's CPU sampling formulas, computed in the input's precision.
"""
import math
import warnings

import numpy as np

from ..._autocast import AUTOCAST, cast_args
from ..._backend import XP
from ..._ops._dispatch import dispatch1
from .pooling import _adaptive_avg, separable_op

__all__ = [
    "affine_grid",
    "channel_shuffle",
    "grid_sample",
    "interpolate",
    "native_channel_shuffle",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_OPS = {}


def _op(mode, nd):
    key = (mode, nd)
    op = _OPS.get(key)
    if op is None:
        base = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear", "bilinear": "Bilinear",
                "bicubic": "Bicubic", "trilinear": "Trilinear"}[mode]
        op = _OPS[key] = separable_op(f"Upsample{base}{nd}DBackward0")
    return op


def _nearest_map(n_in, n_out, scale, exact):
    """Torch's nearest source index (computed in float32 like its CPU kernel)."""
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in / n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    idx = np.minimum(src.astype(np.int64), n_in - 1)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), idx] = 1.0
    return m, idx


def _source(n_in, n_out, scale, align_corners, cubic, dtype):
    """Torch's area_pixel_compute_source_index for every output position, in `dtype`."""
    if align_corners:
        s = dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else dtype(0)
    else:
        s = dtype(1.0 / scale) if scale is not None and scale > 0 else dtype(n_in / n_out)
    dst = np.arange(n_out, dtype=dtype)
    if align_corners:
        return s * dst
    src = s * (dst + dtype(0.5)) - dtype(0.5)
    return src if cubic else np.maximum(src, dtype(0))


def _linear_map(n_in, n_out, scale, align_corners, dtype):
    src = _source(n_in, n_out, scale, align_corners, False, dtype)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)
    i1 = i0 + (i0 < n_in - 1)
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), 1 - lam)
    np.add.at(m, (rows, i1), lam)
    return m


def _cubic_map(n_in, n_out, scale, align_corners, dtype):
    a = dtype(-0.75)
    src = _source(n_in, n_out, scale, align_corners, True, dtype)
    base = np.floor(src)
    t = (src - base).astype(dtype)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    for j, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(base.astype(np.int64) - 1 + j, 0, n_in - 1)), w)
    return m


def _spatial_args(input, size, scale_factor, recompute_scale_factor, mode):
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor "
                    f"in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    f"format.")
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if out is None:
        out = [math.floor(float(input.shape[i + 2]) * scales[i]) for i in range(dim)]
        if recompute_scale_factor or mode == "area":
            scales = None
    if scales is None:
        scales = [None] * dim
    return out, scales


_UPSAMPLE_NAMES = {"nearest": "upsample_nearest{}d", "linear": "upsample_linear1d",
                   "bilinear": "upsample_bilinear2d", "trilinear": "upsample_trilinear3d",
                   "bicubic": "upsample_bicubic2d"}  # autocast's op names


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Same as `torch.nn.functional.interpolate` (antialias=True is not supported)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    if AUTOCAST[0] and mode in _UPSAMPLE_NAMES:
        input, = cast_args(_UPSAMPLE_NAMES[mode].format(nd), (input,))
    out, scales = _spatial_args(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires "
                             "a 4-D tensor as input")
        raise NotImplementedError("interpolate(antialias=True) is not supported")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != nd and nd in (1, 2, 3):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    if nd not in (1, 2, 3) or mode not in ("nearest", "nearest-exact", "area", *_LINEAR_MODES):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")
    if mode != "area" and (min(out) <= 0 or 0 in input.shape[2:]):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(f'{k}: {v}' for k, v in zip('DHW'[-nd:], input.shape[2:]))}) "
                           f"and output ({', '.join(f'{k}: {v}' for k, v in zip('DHW'[-nd:], out))})")
    if mode == "area":
        return _adaptive_avg(nd, input, tuple(out))
    dtype = input._data.dtype.type if input._data.dtype.kind == "f" else np.float32
    maps = []
    for i in range(nd):
        n_in = input.shape[2 + i]
        if mode in ("nearest", "nearest-exact"):
            m, idx = _nearest_map(n_in, out[i], scales[i], mode == "nearest-exact")
            if not (idx == np.arange(n_in)).all() if n_in == out[i] else True:
                maps.append((i - nd, m, idx))
        elif mode == "bicubic":
            maps.append((i - nd, _cubic_map(n_in, out[i], scales[i], align_corners, dtype), None))
        elif n_in != out[i]:  # torch's linear kernels copy a dimension whose size does not change
            maps.append((i - nd, _linear_map(n_in, out[i], scales[i], align_corners, dtype), None))
    if not maps:  # identity: still a new tensor in the graph, as in torch
        maps = [(-1, np.eye(input.shape[-1]), np.arange(input.shape[-1]))]
    return dispatch1(_op(mode, nd), input, tuple(maps))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Same as `torch.nn.functional.upsample` (deprecated alias of interpolate)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Same as `torch.nn.functional.upsample_nearest`."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Same as `torch.nn.functional.upsample_bilinear` (align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- shuffles: pure reshapes and permutes -----------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """Same as `torch.nn.functional.pixel_shuffle`."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Same as `torch.nn.functional.pixel_unshuffle`."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """Same as `torch.nn.functional.channel_shuffle`."""
    g = int(groups)
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


# --- grid sampling: composed from differentiable ops, so gradients reach both input and grid --------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, lo2, hi2):
    """Reflect coordinates into [lo2/2, hi2/2] as an affine map coord * sign + offset (offset and sign from
    the values), so the gradient is +-1 like torch's."""
    if lo2 == hi2:
        return coord * 0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    c = coord.detach()._data
    flips = np.floor(np.abs(c - lo) / span)
    sign_in = np.where(c - lo < 0, -1.0, 1.0)
    even = (flips % 2) == 0
    # torch: d = |c - lo| - flips * span; lo + d when flips is even, else lo + span - d
    sign = np.where(even, sign_in, -sign_in)
    offset = np.where(even, lo - sign_in * lo - flips * span, lo + span + sign_in * lo + flips * span)
    return coord * _const(sign, c.dtype) + _const(offset, c.dtype)


def _const(arr, dtype, device=None):
    """A constant tensor of arr: a device array stays on its device, host data goes to device."""
    import ember
    if arr.__class__ in XP and arr.__class__ is not np.ndarray:
        return ember.Tensor._make(arr.astype(dtype, copy=False))
    return ember.tensor(np.asarray(arr, dtype=dtype), device=device)


def _clip(coord, size):
    """Clamp to [0, size - 1] with torch's gradient: zero on the borders too, not only beyond them."""
    import ember
    c = coord.detach()._data
    inside = (c > 0) & (c < size - 1)
    return ember.where(_const(inside, np.bool_), coord, _const(np.clip(c, 0, size - 1), c.dtype))


def _source_coord(coord, size, padding_mode, align_corners):
    coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Same as `torch.nn.functional.grid_sample`: 4-D input (bilinear, nearest, bicubic) and 5-D input
    (trilinear as 'bilinear', nearest). A composite of ember ops, so input and grid are differentiable."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    return _grid_sample(input, grid, mode, padding_mode, _default_align(align_corners))


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    nd = input.ndim - 2
    if grid.shape[-1] != nd or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if nd not in (2, 3):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    sizes = tuple(input.shape[2:])  # (H, W) or (D, H, W); the grid's last dim lists x (W) first
    n = input.shape[0]
    channels_last = input.permute(0, *range(2, nd + 2), 1)  # one gather yields every channel
    xp = np if input._data.__class__ is np.ndarray else XP[input._data.__class__]
    batch = xp.arange(n).reshape((n,) + (1,) * nd)
    if mode == "bicubic":
        return _bicubic(channels_last, batch, grid, sizes, padding_mode, align_corners)
    coords = [_source_coord(grid[..., nd - 1 - k], sizes[k], padding_mode, align_corners) for k in range(nd)]
    if mode == "nearest":
        # coord * 0 keeps grid in the graph: torch gives it a zero gradient here
        return _corner(channels_last, batch, [np.rint(c.detach()._data) for c in coords], sizes, coords[0] * 0 + 1)
    lows = [np.floor(c.detach()._data) for c in coords]
    upper = [c - _const(lo, lo.dtype) for c, lo in zip(coords, lows)]  # the weights of the upper neighbours
    out = None
    for corner in range(1 << nd):  # each corner of the cell: bit k set takes the upper neighbour along dim k
        weight, at = None, []
        for k in range(nd):
            hi = corner >> (nd - 1 - k) & 1
            f = upper[k] if hi else 1 - upper[k]
            weight = f if weight is None else weight * f
            at.append(lows[k] + hi)
        term = _corner(channels_last, batch, at, sizes, weight)
        out = term if out is None else out + term
    return out


_CUBIC_A = -0.75  # torch's (and OpenCV's) cubic convolution coefficient


def _cubic_weights(t):
    """The four cubic convolution weights of taps at -1, 0, 1, 2 for fractional positions t (a Tensor)."""
    a = _CUBIC_A
    t1, t2 = t + 1, 2 - t
    u = 1 - t
    return (((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * u - (a + 3)) * u * u + 1,
            ((a * t2 - 5 * a) * t2 + 8 * a) * t2 - 4 * a)


def _tap(c, size, padding_mode, align_corners):
    """Integer tap positions c (a NumPy-like array) after the padding rule, as torch's bicubic applies it per tap."""
    if padding_mode == "border":
        return np.clip(c, 0, size - 1)
    if padding_mode == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo2 == hi2:
            return c * 0
        lo, span = lo2 / 2, (hi2 - lo2) / 2
        d = np.abs(c - lo)
        extra, flips = np.fmod(d, span), np.floor(d / span)
        return np.clip(np.where(flips % 2 == 0, extra + lo, span - extra + lo), 0, size - 1)
    return c


def _bicubic(channels_last, batch, grid, sizes, padding_mode, align_corners):
    h, w = sizes
    ix = _unnormalize(grid[..., 0], w, align_corners)
    iy = _unnormalize(grid[..., 1], h, align_corners)
    x0, y0 = np.floor(ix.detach()._data), np.floor(iy.detach()._data)
    wx = _cubic_weights(ix - _const(x0, x0.dtype))
    wy = _cubic_weights(iy - _const(y0, y0.dtype))
    out = None
    for i in range(4):
        yy = _tap(y0 - 1 + i, h, padding_mode, align_corners)
        row = None
        for j in range(4):
            v = _corner(channels_last, batch, [yy, _tap(x0 - 1 + j, w, padding_mode, align_corners)], sizes, wx[j])
            row = v if row is None else row + v
        term = row * wy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out


def _corner(channels_last, batch, at, sizes, weight):
    """Values at integer positions `at` (one array per spatial dim; zero outside the input), times weight, in
    channels-first layout."""
    import ember
    inside = None
    index = [ember.Tensor._make(batch)]
    for c, size in zip(at, sizes):
        ok = (c >= 0) & (c <= size - 1)
        inside = ok if inside is None else inside & ok
        index.append(ember.Tensor._make(np.clip(c, 0, size - 1).astype(np.int64)))
    vals = channels_last[tuple(index)]  # (N, *spatial, C)
    mask = _const(inside, channels_last._data.dtype)
    scale = mask if weight is None else weight * mask
    nd = len(sizes)
    return (vals * scale.unsqueeze(-1)).permute(0, nd + 1, *range(1, nd + 1))


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler's form (modes as integers: 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border,
    2 reflection)."""
    return _grid_sample(input, grid, ("bilinear", "nearest", "bicubic")[interpolation_mode],
                        ("zeros", "border", "reflection")[padding_mode], bool(align_corners))


def _default_align(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=3)
        return False
    return bool(align_corners)


def _base_coords(steps, align_corners, dtype):
    if steps <= 1:
        return np.zeros(max(steps, 1), dtype=dtype)
    v = np.linspace(-1, 1, steps, dtype=dtype)
    return v if align_corners else v * dtype((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """Same as `torch.nn.functional.affine_grid`."""
    align_corners = _default_align(align_corners)
    if theta._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, [int(v) for v in size]  # torch's messages print the size as given
    dtype = theta._data.dtype.type
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        # torch computes the grid as a batched matmul of the base grid with theta^T
        k = len(size) - 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k}] but got: "
                           f"[{theta.shape[0]}, {k}].")
    if len(size) == 4:
        n, _, h, w = size
        xs, ys = np.meshgrid(_base_coords(w, align_corners, dtype), _base_coords(h, align_corners, dtype))
        base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3)
        shape = (n, h, w, 2)
    else:
        n, _, d, h, w = size
        zs, ys, xs = np.meshgrid(_base_coords(d, align_corners, dtype), _base_coords(h, align_corners, dtype),
                                 _base_coords(w, align_corners, dtype), indexing="ij")
        base = np.stack([xs, ys, zs, np.ones_like(xs)], -1).reshape(1, d * h * w, 4)
        shape = (n, d, h, w, 3)
    return (_const(base, dtype, theta.device) @ theta.transpose(1, 2)).reshape(*shape)
