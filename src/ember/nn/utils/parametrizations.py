"""nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal, registered through parametrize."""
from enum import Enum, auto

from ..._backend import xp_of
from ..._tensor import Tensor
from ...autograd.graph import bump_version
from ..modules.module import Module
from . import parametrize
from .parametrize import _no_grad
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ----- weight_norm -----

class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Same as `torch.nn.utils.parametrizations.weight_norm`: original0 is g (the norms), original1 is v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        # checkpoints of the legacy hook-based weight_norm load into the parametrized module
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ----- spectral_norm -----

def _normalize_into(xp, x, out, eps):
    """out[...] = x / max(||x||_2, eps), F.normalize(x, dim=0, eps=eps, out=out) on arrays."""
    n = xp.sqrt(xp.vdot(x, x).real) if x.dtype.kind == "c" else xp.sqrt(xp.dot(x, x))
    xp.divide(x, max(n, eps), out=out)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            from ..functional import normalize
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # in place on the buffers' memory, with no graph: u <- W v / |W v|, v <- W^H u / |W^H u|
        w = weight_mat._data
        xp = xp_of(w)
        wh = w.conj().T if w.dtype.kind == "c" else w.T
        u, v = self._u._data, self._v._data
        for _ in range(n_power_iterations):
            _normalize_into(xp, w @ v, u, self.eps)
            _normalize_into(xp, wh @ u, v, self.eps)
        bump_version(self._u, "normalize")
        bump_version(self._v, "normalize")

    def forward(self, weight):
        if weight.ndim == 1:
            from ..functional import normalize
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _default_dim(module):
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Same as `torch.nn.utils.parametrizations.spectral_norm`."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")  # noqa: TRY004
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ----- orthogonal -----

class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(q):
    from ..._dtype import finfo
    from ..._ops.creation import eye
    n, k = q.size(-2), q.size(-1)
    ident = eye(k, dtype=q.dtype, device=q.device)
    return bool((q.mH @ q).allclose(ident, atol=10.0 * n * finfo(q.dtype).eps))


def _make_orthogonal(a):
    """The Q of a's QR decomposition with its columns signed so that R has a positive diagonal."""
    from ...linalg import qr
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(a, tau):
    """linalg.householder_product in differentiable ops: H_1 ... H_k (first k columns), H_i = I - tau_i v_i v_i^H
    with v_i the i-th column of a below the diagonal and 1 on it."""
    from ..._ops.creation import eye
    n, k = a.size(-2), a.size(-1)
    q = eye(n, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], n, n)
    unit = eye(n, k, dtype=a.dtype, device=a.device)
    vs = a.tril(-1) + unit
    for i in range(k):
        v = vs[..., :, i:i + 1]
        # q @ (I - tau v v^H) = q - tau (q v) v^H
        q = q - (tau[..., i, None, None] * (q @ v)) @ v.mH
    return q[..., :, :k]


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            q = self._exp_or_cayley(x, n, k)
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def _exp_or_cayley(self, x, n, k):
        from ..._ops.creation import eye
        from ..._ops.join import cat
        from ...linalg import matrix_exp, solve
        x = x.tril()
        if n != k:
            x = cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
        a = x - x.mH
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            q = matrix_exp(a)
        else:
            ident = eye(n, dtype=a.dtype, device=a.device)
            q = solve(ident - 0.5 * a, ident + 0.5 * a)
        return q[..., :k] if n != k else q

    def right_inverse(self, q):
        with _no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q):
        from ..._ops.creation import zeros_like
        from ..._ops.join import cat
        from ..._ops.random import randn
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{q.shape}.")
        q_init = q
        n, k = q.size(-2), q.size(-1)
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # torch stores geqrf's Householder vectors here; ember has no geqrf
            raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                      "parametrizations when use_trivialization=False.")
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:
            extra = randn(*q.size()[:-2] + (n, n - k), dtype=q.dtype, device=q.device)
            q = _make_orthogonal(cat([q, extra], dim=-1))
        self.base = q
        neg_id = zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Same as `torch.nn.utils.parametrizations.orthogonal`, except that assigning to the weight with
    use_trivialization=False is not supported for the householder map (ember has no geqrf)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")  # noqa: TRY004
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module

