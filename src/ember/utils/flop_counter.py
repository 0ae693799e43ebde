"""Same as `torch.utils.flop_counter`: FlopCounterMode counts the floating-point operations of the matrix products,
convolutions and attention that run inside it, forward and backward, as torch counts them (a multiply-add is 2).

NOTE [ Counting FLOPs ]
While a FlopCounterMode is open it swaps the forward (and, for convolution and attention, the backward) of the
counted Op records for counting wrappers, as the profiler does (NOTE [ Profiling at no cost ]): nothing is added
to ops it does not count, and nothing at all once it closes. The counts use torch's formulas and torch's op names
as keys ('aten.mm', 'aten.addmm', 'aten.bmm', 'aten.convolution', 'aten.convolution_backward',
'aten._scaled_dot_product_flash_attention' and its backward); the backward of a product is the products it runs
(counted as such), that of a convolution or attention is counted by torch's formula while the kernels it runs are
not counted again. Differences from torch: keys are strings (str(torch.ops.aten.mm) is 'aten.mm'); attention on
the CPU is counted (torch counts it only on a GPU); backward FLOPs are counted under 'Global' but not attributed to
modules (torch attributes them through backward hooks); matrix-vector and dot products are not counted, as in torch.
"""
import math

__all__ = ["FlopCounterMode"]


def _prod(shape):
    return math.prod(int(s) for s in shape)


def _mm_flops(m, k, n):
    return 2 * m * k * n


def _product_flops(a, b):
    """(name, flops) of a matmul of arrays a @ b as torch decomposes it (None for vector products)."""
    if a.ndim == 1 and b.ndim == 2:
        return "aten.mm", _mm_flops(1, a.shape[0], b.shape[1])
    if a.ndim < 2 or b.ndim < 2:
        return None
    if b.ndim == 2:  # folded into one mm
        return "aten.mm", _mm_flops(_prod(a.shape[:-1]), a.shape[-1], b.shape[-1])
    batch = _prod(_broadcast(a.shape[:-2], b.shape[:-2]))
    return "aten.bmm", batch * _mm_flops(a.shape[-2], a.shape[-1], b.shape[-1])


def _broadcast(s, t):
    n = max(len(s), len(t))
    s, t = (1,) * (n - len(s)) + tuple(s), (1,) * (n - len(t)) + tuple(t)
    return tuple(max(a, b) for a, b in zip(s, t))


def _conv_flops(x_shape, w_shape, out_shape, transposed):
    """torch's conv_flop_count."""
    spatial = (x_shape if transposed else out_shape)[2:]
    return 2 * x_shape[0] * _prod(w_shape) * _prod(spatial)


def _conv_backward_flops(g_shape, x_shape, w_shape, transposed, need_input, need_weight):
    """torch's conv_backward_flop: the input gradient and the weight gradient, each a convolution."""
    flops = 0
    if need_input:
        flops += _conv_flops(g_shape, w_shape, x_shape, not transposed)
    if need_weight:
        swap = (lambda s: (s[1], s[0]) + tuple(s[2:]))
        w_grad = tuple(w_shape)
        if transposed:
            flops += _conv_flops(swap(g_shape), swap(x_shape), swap(w_grad), False)
        else:
            flops += _conv_flops(swap(x_shape), swap(g_shape), swap(w_grad), False)
    return flops


def _sdpa_flops(q, k, v):
    """torch's sdpa_flop_count: scores = q @ k^T, then probabilities @ v."""
    b, h = _prod(q[:-2]), 1
    s_q, d_q, s_k, d_v = q[-2], q[-1], k[-2], v[-1]
    return b * h * (_mm_flops(s_q, d_q, s_k) + _mm_flops(s_q, s_k, d_v))


def _sdpa_backward_flops(q, k, v):
    """torch's sdpa_backward_flop_count: the scores again, then the four products of the gradients."""
    bh = _prod(q[:-2])
    s_q, d_q, s_k, d_v = q[-2], q[-1], k[-2], v[-1]
    return bh * (_mm_flops(s_q, d_q, s_k) + _mm_flops(s_q, d_v, s_k) + _mm_flops(s_k, s_q, d_v)
                 + _mm_flops(s_q, s_k, d_q) + _mm_flops(d_q, s_q, s_k))


def _counted_ops():
    """{Op: (forward counter, backward counter or None)}; a counter maps the op's arrays (or node) to
    (name, flops) or None."""
    from .._ops import linalg as L
    from ..nn._functional import attention as A
    from ..nn._functional import conv as C
    from ..nn._functional import linear as LIN

    def product(arrays, attrs, out):
        return _product_flops(arrays[0], arrays[1])

    def linear(arrays, attrs, out):
        x, w = arrays[0], arrays[1]
        return ("aten.addmm" if len(arrays) > 2 else "aten.mm"), _mm_flops(_prod(x.shape[:-1]), x.shape[-1],
                                                                           w.shape[0])

    def conv(transposed):
        def count(arrays, attrs, out):
            y = out[0] if isinstance(out, tuple) else out
            return "aten.convolution", _conv_flops(arrays[0].shape, arrays[1].shape, y.shape, transposed)

        def count_bwd(node, g):
            x, w = node.inputs[0]._data.shape, node.inputs[1]._data.shape
            need = node.needs_input_grad
            return "aten.convolution_backward", _conv_backward_flops(tuple(g.shape), x, w, transposed, need[0],
                                                                     need[1])
        return count, count_bwd

    def attention(arrays, attrs, out):
        return "aten._scaled_dot_product_flash_attention", _sdpa_flops(arrays[0].shape, arrays[1].shape,
                                                                       arrays[2].shape)

    def attention_bwd(node, g):
        q, k, v = (t._data.shape for t in node.inputs[:3])
        return "aten._scaled_dot_product_flash_attention_backward", _sdpa_backward_flops(q, k, v)

    ops = {op: (product, None) for op in (L.MM, L.BMM, L.MATMUL_ND, L.MATMUL_VM)}
    for table in (LIN._LINEAR, LIN._LINEAR_BF16):
        ops.update({op: (linear, None) for op in table.values()})
    for op, transposed in ((C._CONV, False), (C._CONV_B, False), (C._CONVT, True), (C._CONVT_B, True)):
        ops[op] = conv(transposed)
    for op in (A._SDPA, A._SDPA_CUDNN):
        ops[op] = (attention, attention_bwd)
    return ops


_OPEN = [None]  # the FlopCounterMode that counts now


class FlopCounterMode:
    """Same as `torch.utils.flop_counter.FlopCounterMode`: `with FlopCounterMode() as fc:` counts the FLOPs of
    what runs inside (NOTE [ Counting FLOPs ]); `display=True` prints the table when the block ends."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is not None:
            import warnings
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        if custom_mapping:
            raise NotImplementedError("FlopCounterMode: custom_mapping (formulas keyed by aten ops) has no "
                                      "counterpart in ember, which has no aten ops")
        self.depth = depth
        self.display = display
        self.flop_counts = {"Global": {}}
        self._parents = []  # the names of the modules running now, outermost first
        self._stack = []  # (name, module) of the same
        self._saved = {}
        self._hooks = []
        self._quiet = 0  # > 0 inside a backward counted by formula: its own kernels are not counted again

    # ----- what the wrappers report -----
    def _add(self, name, flops, modules=True):
        for key in (["Global"] + (self._parents if modules else [])):
            counts = self.flop_counts.setdefault(key, {})
            counts[name] = counts.get(name, 0) + flops

    def _forward(self, fwd, count):
        def counted(*args):
            out = fwd(*args)
            if not self._quiet:
                r = count(_arrays(args), args, out)
                if r is not None:
                    self._add(*r)
            return out
        return counted

    def _backward(self, bwd, count):
        def counted(node, g):
            if not self._quiet:
                r = count(node, g)
                if r is not None:
                    self._add(*r, modules=False)
            self._quiet += 1
            try:
                return bwd(node, g)
            finally:
                self._quiet -= 1
        return counted

    # ----- the context -----
    def __enter__(self):
        if _OPEN[0] is not None:
            raise RuntimeError("FlopCounterMode: another FlopCounterMode is already counting; they do not nest in "
                               "ember")
        self.flop_counts = {"Global": {}}
        for op, (count, count_bwd) in _counted_ops().items():
            self._saved[op] = (op.fwd, op.bwd)
            op.fwd = self._forward(op.fwd, count)
            if count_bwd is not None and op.bwd is not None:
                op.bwd = self._backward(op.bwd, count_bwd)
        from ..nn.modules import _hooks
        self._hooks = [_hooks.register_module_forward_pre_hook(self._enter_module),
                       _hooks.register_module_forward_hook(self._leave_module)]
        _OPEN[0] = self
        return self

    def __exit__(self, *exc):
        for op, (fwd, bwd) in self._saved.items():
            op.fwd, op.bwd = fwd, bwd
        self._saved = {}
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._parents, self._stack = [], []
        _OPEN[0] = None
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _enter_module(self, module, args):
        """Names as torch's ModuleTracker gives them: the outermost module's class name, then attribute names."""
        name = type(module).__name__
        if self._stack:
            parent_name, parent = self._stack[-1]
            child = next((k for k, m in parent._modules.items() if m is module), type(module).__name__)
            name = f"{parent_name}.{child}"
        self._stack.append((name, module))
        self._parents.append(name)

    def _leave_module(self, module, args, output):
        if self._stack:
            self._stack.pop()
            self._parents.pop()

    # ----- the results -----
    def get_total_flops(self):
        """All FLOPs counted."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{'Global' or a module's name: {op name: FLOPs}}."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as a text table: module, FLOPs, share of the total, then each op under its module."""
        depth = self.depth if depth is None else depth
        total = self.get_total_flops()
        rows = [("Module", "FLOP", "% Total")]
        for name in ["Global"] + sorted(k for k in self.flop_counts if k != "Global"):
            if name != "Global" and name.count(".") + 1 > depth:
                continue
            counts = self.flop_counts[name]
            n = sum(counts.values())
            rows.append((name, _human(n), f"{100 * n / total:.2f}%" if total else "0.00%"))
            for op, f in counts.items():
                rows.append((" - " + op, _human(f), f"{100 * f / total:.2f}%" if total else "0.00%"))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _arrays(args):
    """The leading array arguments of an Op's forward (its tensor inputs; attributes follow)."""
    out = []
    for a in args:
        if not hasattr(a, "shape") or not hasattr(a, "dtype") or isinstance(a, (int, float)):
            break
        out.append(a)
    return out


def _human(n):
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3f}{unit}"
    return str(n)
