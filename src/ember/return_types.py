"""Named tuples returned by ops (torch.return_types)."""
from collections import namedtuple

__all__ = []


def _structseq(name, fields):
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"ember.return_types.{name}(\n{body})"
    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"):
    _structseq(_name, ("values", "indices"))
_structseq("aminmax", ("min", "max"))
_structseq("slogdet", ("sign", "logabsdet"))
_structseq("linalg_slogdet", ("sign", "logabsdet"))
_structseq("qr", ("Q", "R"))
_structseq("linalg_qr", ("Q", "R"))
_structseq("svd", ("U", "S", "V"))
_structseq("linalg_svd", ("U", "S", "Vh"))
_structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
_structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
_structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_structseq("linalg_inv_ex", ("inverse", "info"))
_structseq("linalg_cholesky_ex", ("L", "info"))
_structseq("linalg_ldl_factor", ("LD", "pivots"))
_structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_structseq("histogram", ("hist", "bin_edges"))
_structseq("histogramdd", ("hist", "bin_edges"))
_structseq("frexp", ("mantissa", "exponent"))
