"""BLAS thread control through threadpoolctl."""
import os

_requested = [None]
_single = set()  # path fragments of BLAS libraries kept at one thread (see pin_single_threaded)


def _apply(n):
    # a new controller each time: it sees every BLAS library loaded so far (scipy's may load after numpy's)
    from threadpoolctl import ThreadpoolController
    controller = ThreadpoolController()
    controller.limit(limits=n, user_api="blas")
    for lib in controller.lib_controllers:
        if any(part in lib.filepath for part in _single):
            lib.set_num_threads(1)


def pin_single_threaded(path_fragment):
    """Keep the BLAS library whose path contains path_fragment at one thread. scipy's OpenBLAS serves only the
    optimizers' axpy, which is memory-bound; with threads, its spinning workers fought NumPy's BLAS threads for
    the cores and single calls took 100 ms instead of 10 us."""
    _single.add(path_fragment)
    _apply(_requested[0] if _requested[0] is not None else get_num_threads())


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
