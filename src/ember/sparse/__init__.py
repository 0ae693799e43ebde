"""Sparse tensors: the same as `torch.sparse` for COO and CSR matrices and the products graph code runs on them.

NOTE [ Sparse tensors ]
A sparse tensor is a `SparseTensor` (a Tensor subclass, so isinstance checks hold): COO indices (ndim, nnz) int64,
values (nnz,) and a size; a CSR tensor (2-D) keeps its row pointers and column indices besides. Everything is
computed with ember ops on the indices and values -- index_select / index_add for products, index_put for
to_dense -- so gradients reach the values (and the dense operands) through ordinary autograd, and a sparse leaf's
.grad is a sparse tensor of its values' gradient, as torch's. What is supported: creation
(`sparse_coo_tensor`, `sparse_csr_tensor`, `Tensor.to_sparse` / `to_sparse_coo` / `to_sparse_csr`), `to_dense`,
`coalesce`, `indices` / `values` / `crow_indices` / `col_indices`, `t`, products with dense matrices
(`sparse.mm`, `sparse.addmm`, `ember.mm` / `matmul` / `spmm` / `@`, either side), `sparse.sum`, sums of sparse
tensors, scaling, `detach` / `to`; COO tensors may be hybrid (values with dense trailing dims: creation,
to_sparse(sparse_dim), coalesce, to_dense). Any other op reaching a sparse tensor raises NotImplementedError
naming the layout and pointing to `to_dense()`: nothing computes on it as if it were dense. Other layouts (BSR,
BSC) are not supported.
"""
import numpy as np

import ember

from .._dtype import sparse_coo, sparse_csr
from .._tensor import Tensor

__all__ = ["SparseTensor", "addmm", "mm", "sampled_addmm", "sparse_coo_tensor", "sparse_csr_tensor", "spmm", "sum",
           "to_sparse", "to_sparse_csr"]


class _Dense:
    """What a sparse tensor holds where a dense one keeps its array: its shape and dtype (what autograd checks a
    gradient by), and any dense op reaching it raises."""
    __slots__ = ("dtype", "layout", "shape")

    def __init__(self, lay, shape, dtype):
        self.layout, self.shape, self.dtype = lay, shape, dtype

    def __getattr__(self, name):
        raise NotImplementedError(f"this op has no {self.layout.name} implementation in ember (it works on dense "
                                  f"tensors); call .to_dense() first, or use the ops of ember.sparse")


class SparseTensor(Tensor):
    """A COO or CSR sparse tensor (NOTE [ Sparse tensors ]); build one with ember.sparse_coo_tensor,
    ember.sparse_csr_tensor or Tensor.to_sparse."""

    @staticmethod
    def _new(indices, values, shape, lay=sparse_coo, coalesced=False, csr=None):
        shape = tuple(int(s) for s in shape)
        t = SparseTensor._make(_Dense(lay, shape, values._data.dtype))
        t.__class__ = SparseTensor
        d = t.__dict__
        d["_sp"] = (indices, values, shape, lay, coalesced, csr)
        return t

    # ----- what it is -----
    @property
    def _parts(self):
        return self.__dict__["_sp"]

    @property
    def shape(self):
        return ember.Size(self._parts[2])

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    def dim(self):
        return len(self._parts[2])

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self._parts[2]:
            n *= s
        return n

    @property
    def dtype(self):
        return self._parts[1].dtype

    @property
    def device(self):
        return self._parts[1].device

    @property
    def layout(self):
        return self._parts[3]

    @property
    def is_sparse(self):
        return self._parts[3] == sparse_coo

    @property
    def is_sparse_csr(self):
        return self._parts[3] == sparse_csr

    def sparse_dim(self):
        return int(self._parts[0].shape[0])

    def dense_dim(self):
        return self._parts[1].dim() - 1

    # ----- autograd: through the values -----
    @property
    def requires_grad(self):
        return self._parts[1].requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._parts[1].requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._parts[1].requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._parts[1].grad_fn

    @property
    def is_leaf(self):
        return self._parts[1].is_leaf

    @property
    def grad(self):
        g = self._parts[1].grad
        return None if g is None else self._with_values(g)

    def _with_values(self, values):
        """This tensor's indices (and layout) around other values: a gradient with respect to it."""
        i, _, shape, lay, c, csr = self._parts
        return SparseTensor._new(i, values, shape, lay, c, csr)

    @grad.setter
    def grad(self, value):
        if value is None:
            self._parts[1].grad = None
            return
        raise NotImplementedError("assigning .grad of a sparse tensor is not supported in ember")

    def detach(self):
        i, v, shape, lay, c, csr = self._parts
        return SparseTensor._new(i, v.detach(), shape, lay, c, csr)

    # ----- the parts -----
    def _nnz(self):
        return int(self._parts[1].shape[0])

    def _indices(self):
        return self._parts[0]

    def _values(self):
        return self._parts[1]

    def indices(self):
        self._need_coalesced("indices")
        return self._parts[0]

    def values(self):
        if self.is_sparse:
            self._need_coalesced("values")
        return self._parts[1]

    def _need_coalesced(self, what):
        if self.is_sparse and not self._parts[4]:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")

    def is_coalesced(self):
        return self._parts[4]

    def crow_indices(self):
        self._need_csr("crow_indices")
        return self._parts[5][0]

    def col_indices(self):
        self._need_csr("col_indices")
        return self._parts[5][1]

    def _need_csr(self, what):
        if not self.is_sparse_csr:
            raise RuntimeError(f"{what} expected sparse row compressed tensor layout but got {self.layout.name}")

    # ----- conversions -----
    def coalesce(self):
        """Same as `torch.Tensor.coalesce`: indices sorted (row-major), duplicates summed."""
        i, v, shape, lay, coalesced, _ = self._parts
        if coalesced:
            return self
        if not self._nnz():
            return SparseTensor._new(i, v, shape, sparse_coo, True)
        k = self.sparse_dim()
        flat = np.ravel_multi_index(tuple(i.cpu().numpy()), shape[:k])
        uniq, inverse = np.unique(flat, return_inverse=True)
        dev = v.device
        summed = ember.zeros((len(uniq),) + tuple(v.shape[1:]), dtype=v.dtype, device=dev).index_add(
            0, ember.tensor(inverse.reshape(-1), device=dev), v)
        idx = ember.tensor(np.stack(np.unravel_index(uniq, shape[:k])).astype(np.int64).reshape(k, -1), device=dev)
        return SparseTensor._new(idx, summed, shape, sparse_coo, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """Same as `torch.Tensor.to_dense`: differentiable with respect to the values."""
        i, v, shape = self._parts[:3]
        out = ember.zeros(shape, dtype=v.dtype, device=v.device)
        if self._nnz() or v.requires_grad:  # no values still make a result that is part of the graph
            out = out.index_put(tuple(i[k] for k in range(self.sparse_dim())), v, accumulate=True)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout == sparse_coo:
            return self.to_sparse_coo()
        if layout == sparse_csr:
            return self.to_sparse_csr()
        raise NotImplementedError(f"to_sparse: ember has no {layout} layout")

    def to_sparse_coo(self):
        i, v, shape, lay, coalesced, _ = self._parts
        return self if lay == sparse_coo else SparseTensor._new(i, v, shape, sparse_coo, coalesced)

    def to_sparse_csr(self, dense_dim=None):
        if self.is_sparse_csr:
            return self
        if self.dim() != 2:
            raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor, got {self.dim()}-D")
        c = self.coalesce()
        i, v, shape = c._parts[:3]
        rows = i[0].cpu().numpy()
        crow = np.zeros(shape[0] + 1, np.int64)
        np.add.at(crow, rows + 1, 1)
        crow = np.cumsum(crow)
        dev = v.device
        return SparseTensor._new(i, v, shape, sparse_csr, True, (ember.tensor(crow, device=dev), i[1]))

    def t(self):
        if self.dense_dim():
            raise NotImplementedError("t() of a hybrid sparse tensor (values with dense dims) in ember")
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
        i, v, shape = self._parts[:3]
        return SparseTensor._new(i.flip(0), v, shape[::-1], sparse_coo, False)

    def transpose(self, dim0, dim1):
        if {dim0 % max(self.dim(), 1), dim1 % max(self.dim(), 1)} == {0, 1} and self.dim() == 2:
            return self.t()
        raise NotImplementedError("transpose of a sparse tensor: only the two dims of a matrix in ember")

    def to(self, *args, **kwargs):
        i, v, shape, lay, c, csr = self._parts
        v2 = v.to(*args, **kwargs)
        dev = v2.device
        csr2 = None if csr is None else tuple(x.to(dev) for x in csr)
        return SparseTensor._new(i.to(dev), v2, shape, lay, c, csr2)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def double(self):
        return self.to(ember.float64)

    def float(self):
        return self.to(ember.float32)

    def clone(self, *, memory_format=None):
        i, v, shape, lay, c, csr = self._parts
        return SparseTensor._new(i.clone(), v.clone(), shape, lay, c, csr)

    # ----- arithmetic -----
    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        return mm(other, self)

    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        return mm(self, other)

    def __mul__(self, other):
        if isinstance(other, (int, float)) or isinstance(other, Tensor) and not isinstance(other, SparseTensor) \
                and other.dim() == 0:
            i, v, shape, lay, c, csr = self._parts
            return SparseTensor._new(i, v * other, shape, lay, c, csr)
        raise NotImplementedError("a sparse tensor times anything but a scalar: call .to_dense() first")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * (1.0 / other)

    def __neg__(self):
        return self * -1.0

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            if other.shape != self.shape:
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                                   f"{list(self.shape)} while other has size {list(other.shape)}")
            i = ember.cat([self._parts[0], other._parts[0]], 1)
            v = ember.cat([self._parts[1], other._parts[1]])
            r = SparseTensor._new(i, v, self._parts[2], sparse_coo, False)
            # as torch: two coalesced tensors sum to a coalesced one; otherwise the entries are concatenated
            return r.coalesce() if self._parts[4] and other._parts[4] else r
        if isinstance(other, Tensor):
            return self.to_dense() + other
        raise NotImplementedError("a sparse tensor plus a number: call .to_dense() first")

    def zero_(self):
        """Same as `torch.Tensor.zero_` on a sparse tensor: no stored elements left."""
        i, v, shape, lay = self._parts[:4]
        nothing = ember.zeros((i.shape[0], 0), dtype=i.dtype, device=i.device)
        self.__dict__["_sp"] = (nothing, v.new_zeros((0,) + tuple(v.shape[1:])), shape, sparse_coo, True, None)
        return self

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        return self + (-other)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return sum(self, dim)

    def __repr__(self, *, tensor_contents=None):
        i, v, shape, lay = self._parts[:4]
        grad = ", requires_grad=True" if v.requires_grad else ""
        if lay == sparse_csr:
            crow, col = self._parts[5]
            return (f"tensor(crow_indices={crow!r},\n       col_indices={col!r},\n       values={v.detach()!r}, "
                    f"size={shape}, nnz={self._nnz()}, layout={lay}{grad})")
        return (f"tensor(indices={i!r},\n       values={v.detach()!r},\n       size={shape}, nnz={self._nnz()}, "
                f"layout={lay}{grad})")

    __str__ = __repr__


# ----- creation -----

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """Same as `torch.sparse_coo_tensor` (indices of shape (ndim, nnz), values of shape (nnz,))."""
    i = indices if isinstance(indices, Tensor) else ember.tensor(indices)
    v = values if isinstance(values, Tensor) else ember.tensor(values, dtype=dtype)
    if dtype is not None:
        v = v.to(dtype)
    if device is not None:
        i, v = i.to(device), v.to(device)
    i = i.to(ember.int64)
    if i.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(i.shape)}")
    if v.dim() < 1:
        raise RuntimeError("values must have at least one dimension (the nnz)")
    if i.shape[1] != v.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {i.shape[1]}, nnz "
                           f"from values: {v.shape[0]}")
    host = i.cpu().numpy()
    if size is None:
        size = (tuple(int(m) + 1 for m in host.max(1)) if host.size else (0,) * i.shape[0]) + tuple(v.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != i.shape[0] + v.dim() - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({i.shape[0]}) + dense_dim ({v.dim() - 1}), but "
                           f"got {len(size)}")
    if host.size:
        if host.min() < 0:
            raise RuntimeError(f"found negative index {int(host.min())} for dim {int(host.min(1).argmin())}")
        for d, (m, s) in enumerate(zip(host.max(1), size)):
            if m >= s:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {s} but found index "
                                   f"{int(m)}")
    if requires_grad:
        v = v.detach().requires_grad_(True)
    return SparseTensor._new(i, v, size, sparse_coo, bool(is_coalesced) or i.shape[1] <= 1)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """Same as `torch.sparse_csr_tensor` (a 2-D matrix)."""
    crow = crow_indices if isinstance(crow_indices, Tensor) else ember.tensor(crow_indices)
    col = col_indices if isinstance(col_indices, Tensor) else ember.tensor(col_indices)
    crow, col = crow.to(ember.int64), col.to(ember.int64)
    counts = np.diff(crow.cpu().numpy())
    if (counts < 0).any():
        raise RuntimeError("`crow_indices[..., 1:] >= crow_indices[..., :-1]` is not satisfied.")
    rows = ember.tensor(np.repeat(np.arange(len(counts)), counts), device=col.device)
    if size is None:
        size = (len(counts), int(col.max()) + 1 if col.numel() else 0)
    coo = sparse_coo_tensor(ember.stack([rows, col]), values, size, dtype=dtype, device=device,
                            requires_grad=requires_grad, is_coalesced=True)
    i, v = coo._parts[:2]
    return SparseTensor._new(i, v, coo._parts[2], sparse_csr, True, (crow.to(v.device), col.to(v.device)))


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Same as `torch.Tensor.to_sparse` for a dense tensor: differentiable (the values are gathered from it)."""
    if isinstance(input, SparseTensor):
        return input.to_sparse(sparse_dim, layout=layout)
    k = input.dim() if sparse_dim is None else int(sparse_dim)
    if not 0 <= k <= input.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0, {input.dim()}] range, but {k} is given")
    host = input.detach().cpu().numpy()
    mask = host != 0 if k == host.ndim else (host != 0).reshape(host.shape[:k] + (-1,)).any(-1)
    nz = np.nonzero(mask) if k else ()
    idx = ember.tensor(np.stack(nz).astype(np.int64).reshape(k, -1) if k else np.zeros((0, 1), np.int64),
                       device=input.device)
    values = input[tuple(idx[j] for j in range(k))] if k else input.unsqueeze(0)
    coo = SparseTensor._new(idx, values, tuple(input.shape), sparse_coo, True)
    return coo if layout is None or layout == sparse_coo else coo.to_sparse(layout=layout)


def to_sparse_csr(input, dense_dim=None):
    """Same as `torch.Tensor.to_sparse_csr` for a dense matrix."""
    return to_sparse(input).to_sparse_csr()


# ----- products and sums -----

def _check_mm(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"sparse.mm: expected 2-D matrices, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")


def mm(mat1, mat2, reduce="sum"):
    """Same as `torch.sparse.mm`: sparse @ dense (or dense @ sparse) is dense, differentiable with respect to the
    dense matrix and the values; sparse @ sparse is sparse. reduce ("sum", "mean", "amax", "amin") combines the
    products of a row's stored elements, for a CSR mat1 (rows without any give 0)."""
    if reduce != "sum":
        return _mm_reduce(mat1, mat2, reduce)
    for m in (mat1, mat2):
        if isinstance(m, SparseTensor) and m.dense_dim():
            raise NotImplementedError("sparse.mm of a hybrid sparse tensor (values with dense dims) in ember")
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        _check_mm(mat1, mat2)
        return to_sparse(mm(mat1, mat2.to_dense()))
    if isinstance(mat2, SparseTensor):  # dense @ sparse = (sparse^T @ dense^T)^T
        return mm(mat2.t(), mat1.t()).t()
    _check_mm(mat1, mat2)
    i, v = mat1._parts[:2]
    out = ember.zeros((mat1.shape[0], mat2.shape[1]), dtype=ember.promote_types(v.dtype, mat2.dtype),
                      device=mat2.device)
    if not mat1._nnz():
        return out
    rows = mat2.index_select(0, i[1]) * v.unsqueeze(1)
    return out.index_add(0, i[0], rows)


def _mm_reduce(mat1, mat2, reduce):
    if reduce not in ("mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, mean, amax or amin, got {reduce}")
    if not isinstance(mat1, SparseTensor) or not mat1.is_sparse_csr or isinstance(mat2, SparseTensor):
        raise RuntimeError("sparse.mm with reduce: expected mat1 to be a sparse CSR tensor and mat2 a dense one")
    _check_mm(mat1, mat2)
    i, v = mat1._parts[:2]
    rows = mat2.index_select(0, i[1]) * v.unsqueeze(1)
    out = ember.zeros((mat1.shape[0], mat2.shape[1]), dtype=rows.dtype, device=mat2.device)
    return out.index_reduce(0, i[0], rows, reduce, include_self=False)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """Same as `torch.sparse.addmm`: beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    p = mm(mat1, mat2)
    return (mat * beta if beta != 1 else mat) + (p * alpha if alpha != 1 else p)


def sum(input, dim=None, dtype=None):  # noqa: A001 - torch's name
    """Same as `torch.sparse.sum`: every element (a dense 0-dim result), or over dims (sparse, or dense when every
    dim is summed)."""
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim)
    i, v, shape = input._parts[:3]
    if dim is not None and input.dense_dim():
        raise NotImplementedError("sparse.sum over dims of a hybrid sparse tensor (values with dense dims) in ember")
    if dim is None:
        s = v.sum()
        return s if dtype is None else s.to(dtype)
    dims = sorted({d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)})
    keep = [d for d in range(len(shape)) if d not in dims]
    if not keep:
        return v.sum()
    r = SparseTensor._new(i[keep], v, tuple(shape[d] for d in keep), sparse_coo, False).coalesce()
    return r if dtype is None else r.to(dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """Same as `torch.sparse.sampled_addmm`: beta * input + alpha * (mat1 @ mat2) at input's nonzero positions,
    a CSR tensor with input's pattern; differentiable with respect to input's values, mat1 and mat2."""
    if not isinstance(input, SparseTensor) or not input.is_sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected input to be a sparse CSR tensor, got layout "
                           f"{getattr(input, 'layout', type(input).__name__)}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if isinstance(m, SparseTensor) or m.dim() != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a dense 2-D matrix, got "
                               f"{'a sparse tensor' if isinstance(m, SparseTensor) else f'{m.dim()}-D'}")
    if input.dim() != 2 or mat1.shape[1] != mat2.shape[0] or (mat1.shape[0], mat2.shape[1]) != tuple(input.shape):
        raise RuntimeError(f"sampled_addmm: input of size {list(input.shape)} cannot hold mat1 @ mat2 of sizes "
                           f"{list(mat1.shape)} and {list(mat2.shape)}")
    if not input.dtype == mat1.dtype == mat2.dtype:
        raise RuntimeError(f"sampled_addmm: expected input, mat1 and mat2 of one dtype, got {input.dtype}, "
                           f"{mat1.dtype} and {mat2.dtype}")
    i, v = input._parts[:2]
    products = (mat1.index_select(0, i[0]) * mat2.t().index_select(0, i[1])).sum(-1)
    r = input._with_values(v * beta + products * alpha)
    if out is None:
        return r
    if not isinstance(out, SparseTensor) or not out.is_sparse_csr or out.dtype != r.dtype:
        raise RuntimeError(f"sampled_addmm: out must be a sparse CSR tensor of dtype {r.dtype}")
    out.__dict__["_sp"] = r._parts  # out takes the result's indices and values, as torch resizes it
    return out


def spmm(input, mat2):
    """Same as `torch.spmm`."""
    return mm(input, mat2)


def _register():
    """ember's products route sparse operands here."""
    from .._ops import linalg
    linalg.SPARSE_CLASSES.add(SparseTensor)
    linalg.SPARSE_MM[0] = mm


_register()
