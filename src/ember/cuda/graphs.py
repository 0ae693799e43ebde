"""CUDA graphs, as torch has them: CUDAGraph, the `graph` capture context, graph_pool_handle and
make_graphed_callables.

NOTE [ CUDA graphs ]
A capture records every kernel that ember (through CuPy) queues on the capture stream into a CUDA graph, which
`replay()` then launches with one call: the Python work of every op is paid once, at capture. Three things make
that safe, as in torch:
- memory: while capturing, this thread's allocations come from the graph's private pool (graph_pool_handle; graphs
  may share one), so the addresses baked into the graph are never handed to work outside it; the tensors made during
  capture are the graph's static outputs, refreshed by each replay;
- host reads: reading device values on the host (.item(), .cpu(), printing, synchronize()) cannot be captured and
  raises a RuntimeError at once, before anything reaches CUDA;
- device-side checks (NOTE [ Deferred device checks ]): those queued during capture are computed by every replay
  and reported at the next synchronization after it;
- matrix products: CuPy refuses to capture cuBLAS, so during a capture ember's products (matmul, mm, bmm, linear,
  the row sums of cross_entropy and layer_norm) run as a kernel of ember's own (_backend/captured_gemm.py): full
  float32 precision, meant for the small products of steps worth capturing. Other cuBLAS users (CuPy's einsum,
  tensordot, linalg) cannot be captured and raise CuPy's NotImplementedError.
Everything else the capture cannot see is frozen at capture: Python control flow, host scalars (an optimizer's
learning rate or step count: torch asks for capturable=True there, so does ember), and random numbers (a captured
dropout mask is the same on every replay). Warm up (run the region a few times) before capturing, as torch asks.
"""
import gc

from .._backend import deferred
from . import _state
from .._backend.cuda_alloc import _make_malloc
from .memory import empty_cache
from .streams import Stream, stream

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]

_MODES = ("global", "thread_local", "relaxed")


class _Pool:
    """A private memory pool of CUDA graphs (what graph_pool_handle returns)."""
    __slots__ = ("pool", "malloc")

    def __init__(self, cp):
        self.pool = cp.cuda.MemoryPool()
        self.malloc = _make_malloc(cp, self.pool)  # counted in ember.cuda's memory statistics like any allocation

    def __repr__(self):
        return f"<ember.cuda graph pool, {self.pool.total_bytes()} bytes reserved>"


def graph_pool_handle():
    """Same as `torch.cuda.graph_pool_handle`: a memory pool to share between graph captures (pool=...)."""
    return _Pool(_state.cupy())


def is_current_stream_capturing():
    """Same as `torch.cuda.is_current_stream_capturing`."""
    return deferred.CAPTURING[0] is not None


class CUDAGraph:
    """Same as `torch.cuda.CUDAGraph`: a captured CUDA graph (NOTE [ CUDA graphs ])."""

    def __init__(self, keep_graph=False):
        self._cp = _state.cupy()
        self._graph = None
        self._pool = None
        self._stream = None
        self._allocator = None
        self._checks = None   # device check records the capture queued; each replay computes them again

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Starts capturing the work queued on the current stream (not the default stream)."""
        cp = self._cp
        if self._graph is not None or self._stream is not None:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To capture a new graph, "
                               "create a new instance.")
        if deferred.CAPTURING[0] is not None:
            raise RuntimeError("Cannot begin a CUDA graph capture while another capture is underway.")
        if capture_error_mode not in _MODES:
            raise RuntimeError(f"Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, got "
                               f"{capture_error_mode}")
        if pool is not None and not isinstance(pool, _Pool):
            raise TypeError(f"pool must come from ember.cuda.graph_pool_handle() or CUDAGraph.pool(), got "
                            f"{type(pool).__name__}")
        cs = cp.cuda.get_current_stream()
        if cs.ptr == 0:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, after capture, "
                               "it's ok to replay them on the default stream.)")
        self._pool = pool if pool is not None else graph_pool_handle()
        self._allocator = cp.cuda.using_allocator(self._pool.malloc)
        self._allocator.__enter__()
        # always relaxed: the graph's pool may have to cudaMalloc during capture, which global and thread-local
        # captures refuse (torch's allocator switches the thread to relaxed mode around its cudaMalloc; CuPy offers
        # no such switch). Host reads, the unsafe calls that matter, are refused by ember itself.
        try:
            cs.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
        except BaseException:
            self._allocator.__exit__(None, None, None)
            self._allocator = None
            raise
        self._stream = cs
        self._checks = []
        deferred.CAPTURING[0] = self._checks

    def capture_end(self):
        """Ends the capture begun by capture_begin; the graph is then ready to replay."""
        if self._stream is None:
            raise RuntimeError("capture_end() called without a matching capture_begin()")
        cs, self._stream = self._stream, None
        try:
            self._graph = cs.end_capture()
        finally:
            deferred.CAPTURING[0] = None
            self._allocator.__exit__(None, None, None)
            self._allocator = None

    def _abort(self):
        """Ends a capture that failed part-way and forgets it (the stream is usable again)."""
        try:
            self.capture_end()
        except Exception:  # noqa: BLE001 - CUDA reports the capture invalidated: nothing to keep either way
            pass
        self.reset()

    def replay(self):
        """Launches the captured work on the current stream."""
        if self._graph is None:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
        cs = self._cp.cuda.get_current_stream()
        self._graph.launch(cs)
        if self._checks:
            deferred.requeue(self._cp, self._checks)

    def reset(self):
        """Deletes the graph and its hold on the memory pool."""
        self._graph = None
        self._pool = None
        self._checks = None

    def pool(self):
        """The memory pool of this graph, to share with another capture."""
        return self._pool

    def enable_debug_mode(self):
        """Accepted for torch's API; ember keeps no graph description to dump."""

    def debug_dump(self, debug_path):
        raise RuntimeError("ember's CUDA graphs (made through CuPy) cannot write a debug dump")


class graph:
    """Same as `torch.cuda.graph`: `with ember.cuda.graph(g):` captures the block into CUDAGraph g, on a side stream
    (the stream given, or one shared by all captures), with memory from `pool` (a private pool when None). Work
    queued before the block is finished first, and cached memory is released, as in torch."""
    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = Stream()
            stream = graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self._ctx = None

    def __enter__(self):
        from . import synchronize
        synchronize()
        gc.collect()
        empty_cache()
        self._ctx = stream(self.capture_stream)
        self._ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise
        return self.cuda_graph

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._abort()
        finally:
            self._ctx.__exit__(exc_type, exc, tb)
        return False


def _leaves(value):
    """The tensors of a tensor or a (nested) tuple/list of them, and a function that rebuilds the structure."""
    from .. import Tensor
    if isinstance(value, Tensor):
        return [value], lambda it: next(it)
    if isinstance(value, (tuple, list)):
        parts = [_leaves(v) for v in value]
        leaves = [t for p in parts for t in p[0]]
        kind = type(value)
        return leaves, lambda it: kind(build(it) for _, build in parts)
    raise TypeError(f"make_graphed_callables: outputs must be tensors or (nested) tuples/lists of them, got "
                    f"{type(value).__name__}")


def _graphed_function(fwd_graph, bwd_graph, n_user, rebuild, inputs, outputs, grad_outputs, grad_inputs):
    from ..autograd.function import Function, once_differentiable

    class Graphed(Function):
        @staticmethod
        def forward(ctx, *args):
            for static, arg in zip(inputs[:n_user], args[:n_user]):
                if static.data_ptr() != arg.data_ptr():
                    static.copy_(arg)
            fwd_graph.replay()
            return tuple(o.detach() for o in outputs)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            for static, g in zip(grad_outputs, grads):
                if static is None:
                    continue
                if g is None:
                    static.zero_()
                elif static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd_graph.replay()
            return tuple(None if g is None else g.detach() for g in grad_inputs)

    def graphed(*user_args):
        args = tuple(user_args) + inputs[n_user:]
        if len(user_args) != n_user:
            raise TypeError(f"this graphed callable was captured with {n_user} tensor arguments, got "
                            f"{len(user_args)}")
        return rebuild(iter(Graphed.apply(*args)))
    return graphed


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Same as `torch.cuda.make_graphed_callables`: each callable (a function or a Module) captured into a forward
    and a backward CUDA graph from its sample arguments (tuples of tensors); calling the result copies the
    arguments into the captured inputs and replays, and its backward replays the backward graph. A Module's
    forward is replaced, and falls back to the original while `training` differs from its state at capture."""
    from .. import _autocast, autograd, empty_like
    from ..nn import Module
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if _autocast.AUTOCAST[0] and _autocast.CACHE_ENABLED[0]:
        raise RuntimeError("make_graphed_callables does not support the autocast caching. Please set "
                           "`cache_enabled=False`.")
    from .. import Tensor
    surfaces = []
    for c, args in zip(callables, sample_args):
        if not isinstance(args, tuple) or not all(isinstance(a, Tensor) for a in args):
            raise TypeError("In the beta API, sample_args for each callable must contain only Tensors. Other "
                            "types are not allowed.")
        params = ()
        if isinstance(c, Module):
            if c._forward_hooks or c._forward_pre_hooks or c._backward_hooks:
                raise RuntimeError("Modules must not have hooks registered at the time they are passed. However, "
                                   "registering hooks on modules after passing them through make_graphed_callables "
                                   "is allowed.")
            if any(b.requires_grad for b in c.buffers()):
                raise RuntimeError("In any :class:`~ember.nn.Module` passed to :func:`~make_graphed_callables`, "
                                   "only parameters may be trainable. All buffers must have ``requires_grad=False``.")
            params = tuple(c.parameters())
        surfaces.append(args + params)

    def wanted(surface):
        return tuple(t for t in surface if t.requires_grad)

    from . import synchronize
    synchronize()
    with stream(Stream()):  # warm-up on a side stream, as the captures run
        for c, args, surface in zip(callables, sample_args, surfaces):
            outs = None
            for _ in range(num_warmup_iters):
                outs = [o for o in _leaves(c(*args))[0] if o.requires_grad]
                if outs and wanted(surface):
                    autograd.grad(outs, wanted(surface), [empty_like(o) for o in outs], allow_unused=allow_unused_input)
            del outs
    synchronize()

    pool = graph_pool_handle() if pool is None else pool
    captured = []
    for c, args in zip(callables, sample_args):
        g = CUDAGraph()
        with graph(g, pool=pool):
            outs = c(*args)
        leaves, rebuild = _leaves(outs)
        captured.append((g, tuple(leaves), rebuild))

    backward = [None] * len(callables)
    for k in reversed(range(len(callables))):  # in reverse, as backward passes run
        _, outs, _ = captured[k]
        surface = surfaces[k]
        grad_outputs = tuple(empty_like(o) if o.requires_grad else None for o in outs)
        needs = [o for o in outs if o.requires_grad]
        g = CUDAGraph()
        grads = ()
        with graph(g, pool=pool):
            if needs and wanted(surface):
                grads = autograd.grad(needs, wanted(surface), [s for s in grad_outputs if s is not None],
                                      allow_unused=allow_unused_input)
        it = iter(grads)
        grad_inputs = tuple(next(it, None) if t.requires_grad else None for t in surface)
        backward[k] = (g, grad_outputs, grad_inputs)

    results = []
    for c, args, surface, (fg, outs, rebuild), (bg, grad_outputs, grad_inputs) in zip(
            callables, sample_args, surfaces, captured, backward):
        fn = _graphed_function(fg, bg, len(args), rebuild, surface, outs, grad_outputs, grad_inputs)
        if isinstance(c, Module):
            c.forward = _graphed_forward(c, c.training, fn, c.forward)
            results.append(c)
        else:
            results.append(fn)
    return results[0] if just_one else tuple(results)


def _graphed_forward(module, training, graphed, eager):
    def forward(*args):
        return graphed(*args) if module.training == training else eager(*args)
    return forward
