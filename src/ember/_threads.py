"""BLAS thread control through threadpoolctl."""
import os

_requested = [None]


def _apply(n):
    # a new controller each time: it sees every BLAS library loaded so far (scipy's may load after numpy's)
    from threadpoolctl import ThreadpoolController
    ThreadpoolController().limit(limits=n, user_api="blas")


def set_num_threads(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    _apply(n)
    _requested[0] = n


def reapply():
    """Apply the requested thread count again, to a BLAS library loaded after set_num_threads."""
    if _requested[0] is not None:
        _apply(_requested[0])


def get_num_threads():
    if _requested[0] is not None:
        return _requested[0]
    from threadpoolctl import ThreadpoolController
    counts = [p["num_threads"] for p in ThreadpoolController().info() if p.get("user_api") == "blas"]
    return max(counts) if counts else (os.cpu_count() or 1)
