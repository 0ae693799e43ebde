"""Autocast state and casting policy, read by the ops that autocast affects.

NOTE [ Autocast ]
Ops on torch's autocast lists start with `if AUTOCAST[0]: args = cast_args("name", args)`: one list read when no
autocast region is active (unary math gets it from its binding, `define` in _ops/unary.py; in-place forms are
not cast, as in torch). Inside a region, `cast_args` looks the op up in the policy of the device type of its
first tensor argument, as torch does:
- "lower": floating-point tensors (not float64) are cast to the region's dtype (matmul, linear, conv, SDPA...);
- "fp32": float16/bfloat16 tensors are cast to float32 (losses, and on CUDA exp/log/softmax/norms...);
- "promote": all floating-point tensors are cast to the widest floating dtype among them.
Casts are ordinary differentiable `.to()` calls, so gradients flow back in the parameters' dtype. Casts of leaf
tensors that require grad (weights) are cached until the outermost region exits, so a weight used by many ops is
cast once per region. Like grad mode, the state is per process, not per thread.
"""
from ._dtype import bfloat16, float16, float32, float64

AUTOCAST = [False]  # True while some device type has autocast enabled

ENABLED = {"cpu": False, "cuda": False}
DTYPE = {"cpu": bfloat16, "cuda": float16}
CACHE_ENABLED = [True]
NESTING = [0]
_cache = {}  # id(leaf) -> (leaf, cast): the leaf is held so its id is not reused while cached

_CPU_LOWER = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bmm", "mm",
              "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear", "matmul", "prelu",
              "scaled_dot_product_attention"}
_CPU_FP32 = {"avg_pool3d", "binary_cross_entropy", "grid_sampler", "prod", "quantile", "nanquantile", "cdist",
             "trace", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "pinverse",
             "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
             "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "mse_loss",
             "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss",
             "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
             "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div", "multilabel_margin_loss",
             "binary_cross_entropy_with_logits", "qr", "svd", "triangular_solve", "adaptive_max_pool3d",
             "linalg_qr", "linalg_cholesky", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq",
             "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_matrix_norm",
             "linalg_vector_norm", "linalg_pinv", "linalg_eigvals", "linalg_eigvalsh", "linalg_matrix_rank"}
_CPU_PROMOTE = {"stack", "cat", "index_copy"}

_CUDA_LOWER = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
               "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm",
               "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "lstm_cell", "gru_cell", "rnn_tanh_cell",
               "rnn_relu_cell", "scaled_dot_product_attention"}
_CUDA_FP32 = {"acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
              "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm", "cosine_similarity",
              "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss",
              "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
              "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
              "dist", "pdist", "cdist", "renorm", "logsumexp", "prod", "softmax", "log_softmax", "cumprod",
              "cumsum", "linalg_vector_norm", "linalg_matrix_norm", "sum", "cross_entropy_loss", "ctc_loss",
              "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d",
              "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d"}
_CUDA_PROMOTE = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put",
                 "scatter_add", "tensordot", "stack", "cat", "index_copy"}

POLICY = {"cpu": (_CPU_LOWER, _CPU_FP32, _CPU_PROMOTE), "cuda": (_CUDA_LOWER, _CUDA_FP32, _CUDA_PROMOTE)}
LISTED = frozenset().union(*(s for p in POLICY.values() for s in p))  # the ops some autocast policy names


def cast_args(name, args):
    """args (a tuple; None and non-tensors pass through) cast as the active autocast policy says for op name."""
    dev = None
    for a in args:
        if a is not None and hasattr(a, "_data"):
            dev = a.device.type
            break
    if dev is None or not ENABLED.get(dev):
        return args
    lower, fp32, promote = POLICY[dev]
    if name in lower:
        return tuple(_cast(a, DTYPE[dev], dev, (float32, float16, bfloat16)) for a in args)
    if name in fp32:
        return tuple(_cast(a, float32, dev, (float16, bfloat16)) for a in args)
    if name in promote:
        dts = [a.dtype for a in args if a is not None and hasattr(a, "_data") and a.dtype.is_floating_point]
        widest = max(dts, key=lambda d: (d.itemsize, d is not bfloat16), default=None)
        return tuple(_cast(a, widest, dev, (float32, float16, bfloat16, float64)) for a in args) if widest else args
    return args


def cast_one(name, tensor):
    """cast_args for a single tensor argument."""
    return cast_args(name, (tensor,))[0]


def _cast(a, dtype, dev, eligible):
    if a is None or not hasattr(a, "_data") or a.dtype is dtype or a.dtype not in eligible or a.device.type != dev:
        return a
    if CACHE_ENABLED[0] and a._requires_grad and a._grad_fn is None:
        hit = _cache.get(id(a))
        if hit is not None and hit[1].dtype is dtype and hit[2] == a._version:
            return hit[1]
        out = a.to(dtype)
        _cache[id(a)] = (a, out, a._version)
        return out
    return a.to(dtype)


def clear_cache():
    """Same as `torch.clear_autocast_cache`."""
    _cache.clear()


def _device_type(device_type):
    if device_type not in ENABLED:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_enabled(device_type="cuda"):
    """Same as `torch.is_autocast_enabled` (without an argument: the CUDA state, as in torch)."""
    return ENABLED[_device_type(device_type)]


def set_autocast_enabled(device_type, enabled=None):
    """Same as `torch.set_autocast_enabled(device_type, enabled)` (also the old one-argument CUDA form)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    ENABLED[_device_type(device_type)] = bool(enabled)
    AUTOCAST[0] = any(ENABLED.values())


def get_autocast_dtype(device_type):
    """Same as `torch.get_autocast_dtype`."""
    return DTYPE[_device_type(device_type)]


def set_autocast_dtype(device_type, dtype):
    """Same as `torch.set_autocast_dtype`."""
    DTYPE[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    """Same as `torch.is_autocast_cache_enabled`."""
    return CACHE_ENABLED[0]


def set_autocast_cache_enabled(enabled):
    """Same as `torch.set_autocast_cache_enabled`."""
    CACHE_ENABLED[0] = bool(enabled)


def autocast_increment_nesting():
    """Same as `torch.autocast_increment_nesting`."""
    NESTING[0] += 1
    return NESTING[0]


def autocast_decrement_nesting():
    """Same as `torch.autocast_decrement_nesting`."""
    NESTING[0] -= 1
    return NESTING[0]


clear_autocast_cache = clear_cache
