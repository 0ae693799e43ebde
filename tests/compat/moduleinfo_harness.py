"""PyTorch's ModuleInfo database (torch.testing._internal.common_modules.module_db) run against ember.

For each ModuleInfo, every module input torch generates on the CPU (float32 and float64, training and evaluation)
builds torch's module and ember's module of the same name from the same constructor arguments, gives ember's the
state_dict of torch's, and runs both forwards: outputs must agree in type, shape, dtype and value, and so must the
buffers after the forward (running statistics). In float64 the gradients of sum(out * w) with respect to the inputs
that require grad and to every parameter must agree too. Modules whose outputs are random (dropout) are compared
in shape and dtype only.

    python -m tests.compat.moduleinfo_harness [name-substring]   # prints each failing module and the totals
    python -m tests.compat.moduleinfo_harness --write-known      # rewrites moduleinfo_known_failures.py
"""
import warnings

import ember

from . import opinfo_harness as ops

DTYPES = ("float32", "float64")


def load():
    """module_db (needs torch and expecttest)."""
    ops.load()
    from torch.testing._internal.common_modules import module_db
    ops.unlock_backend_flags()
    return module_db


def module_id(info):
    return info.name + (f".{info.variant_name}" if getattr(info, "variant_name", "") else "")


def ember_class(info):
    """ember.nn's class of the module's name; raises AttributeError where ember lacks it."""
    name = info.module_cls.__name__
    cls = getattr(ember.nn, name, None)
    if cls is None:
        raise AttributeError(f"ember.nn has no {name}")
    return cls


def _random(make, args, kwargs):
    """Whether two forwards of the same module on the same input differ (dropout and friends)."""
    torch = ops.torch
    m = make()
    torch.manual_seed(0)
    a = ops._flat(m(*args, **kwargs), [])
    torch.manual_seed(1)
    b = ops._flat(m(*args, **kwargs), [])
    return any(isinstance(x, torch.Tensor) and x.dtype.is_floating_point and not torch.equal(x, y)
               for x, y in zip(a, b))


def check_input(info, cls, module_input, dtype, training, grads):
    """Compare one module input; raises AssertionError (or ember's exception) where ember differs."""
    torch = ops.torch
    c, f = module_input.constructor_input, module_input.forward_input
    tdt = getattr(torch, dtype)

    def make_torch():
        torch.manual_seed(0)
        m = info.module_cls(*c.args, **c.kwargs).to(tdt)
        return m.train(training)

    m_t = make_torch()
    e_args, e_kwargs = ops.to_ember([list(c.args), dict(c.kwargs)])
    m_e = cls(*e_args, **e_kwargs).to(getattr(ember, dtype)).train(training)
    ins = ops.to_ember([list(f.args), dict(f.kwargs)])
    random = _random(make_torch, f.args, f.kwargs)

    def state():
        return {k: ops.to_ember(v.detach().clone()) for k, v in m_t.state_dict().items()}

    if "Lazy" in info.module_cls.__name__:  # parameters exist after a first forward, on both sides
        want = m_t(*f.args, **f.kwargs)
        m_e(*ins[0], **ins[1])
        m_e.load_state_dict(state())
    else:  # the state before the forward, which may change buffers (running statistics)
        m_e.load_state_dict(state())
        want = m_t(*f.args, **f.kwargs)
    got = m_e(*ins[0], **ins[1])
    rtol, atol = ops._TOL[dtype]
    if random:
        ops.compare_structure(got, want)
        return
    ops.compare(got, want, rtol, atol)
    for (name, b_t), (_, b_e) in zip(sorted(m_t.named_buffers()), sorted(m_e.named_buffers())):
        ops.compare(b_e, b_t, rtol, atol, f"buffer {name}")
    if not grads:
        return
    t_leaves = ops._leaves([list(f.args), dict(f.kwargs)], []) + [p for p in m_t.parameters() if p.requires_grad]
    e_leaves = ops._leaves(ins, []) + [p for p in m_e.parameters() if p.requires_grad]
    assert len(t_leaves) == len(e_leaves), f"{len(e_leaves)} leaves need grad in ember, {len(t_leaves)} in torch"
    try:
        ops.compare_grads(want, got, t_leaves, e_leaves, "leaf")
    except AssertionError:
        if not torch_skips_grad(info) or any(p.requires_grad for p in m_e.parameters()):
            raise
        # torch's suite does not test this module's gradient (CTCLoss: torch's is right only on the log-simplex,
        # pytorch#52241): finite differences judge ember's
        ops.gradcheck_ember(lambda args, kwargs: m_e(*args, **kwargs), [ins[0], [ins[1]], {}], lambda out: out)


def torch_skips_grad(info):
    """Whether torch's module tests skip (or expect to fail) the float64 gradient check of this module on the CPU."""
    for d in info.decorators:
        if (getattr(d, "cls_name", None), getattr(d, "test_name", None)) == ("TestModule", "test_grad") \
                and d.device_type in (None, "cpu") and d.active_if:
            return True
    return False


def check_module(info):
    """'ok', 'not compared', or a one-line reason why ember fails this module (the first failing input)."""
    torch = ops.torch
    try:
        cls = ember_class(info)
    except AttributeError as e:
        return f"missing: {e}"
    supported = {str(d).split(".")[1] for d in info.dtypes}
    compared = 0
    torch.manual_seed(0)  # the generated inputs are random: the same ones every run
    for dtype in DTYPES:
        if dtype not in supported:
            continue
        grads = dtype == "float64"
        for training in (True, False):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    inputs = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype),
                                                     requires_grad=grads, training=training)
            except Exception:  # noqa: BLE001 - torch's own input generator failing is not ember's failure
                continue
            for k, module_input in enumerate(inputs):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        check_input(info, cls, module_input, dtype, training, grads)
                    compared += 1
                except ops.NotCompared:
                    continue
                except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                    first = next((line for line in str(e).strip().splitlines() if line.strip()), "")
                    mode = "train" if training else "eval"
                    return f"{dtype} {mode} input {k} ({module_input.desc}): {type(e).__name__}: {first[:160]}"
    return "ok" if compared else "not compared"


def main(argv):
    module_db = load()
    pattern = next((a for a in argv if not a.startswith("--")), "")
    results = {module_id(i): check_module(i) for i in module_db if pattern in module_id(i)}
    bad = {k: v for k, v in results.items() if v not in ("ok", "not compared")}
    for k, v in bad.items():
        print(f"{k}: {v}")
    ok = sum(v == "ok" for v in results.values())
    nc = sum(v == "not compared" for v in results.values())
    print(f"\n{ok} of {ok + len(bad)} compared modules pass ({100 * ok / max(ok + len(bad), 1):.1f}%); "
          f"{nc} not compared")
    if "--write-known" in argv:
        ops.write_known("moduleinfo", "ModuleInfo modules", bad)


if __name__ == "__main__":
    ops.cli(main)
