"""BLAS thread control through threadpoolctl."""
import os

_limiter = []


def _controller():
    from threadpoolctl import ThreadpoolController
    if not _limiter:
        _limiter.append(ThreadpoolController())
    return _limiter[0]


def set_num_threads(n):
    if not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    ctl = _controller()
    ctl.limit(limits=n, user_api="blas")
    _state["n"] = n


_state = {"n": None}


def get_num_threads():
    if _state["n"] is not None:
        return _state["n"]
    info = [p["num_threads"] for p in _controller().info() if p.get("user_api") == "blas"]
    return max(info) if info else (os.cpu_count() or 1)
