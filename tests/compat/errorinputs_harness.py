"""PyTorch's bad-input cases (every OpInfo's error_inputs) run against ember: each must raise, with torch's
exception type; whether the message also matches torch's regex is counted, not required.

    python -m tests.compat.errorinputs_harness [name-substring]   # prints each op with a failing case, totals
    python -m tests.compat.errorinputs_harness --write-known      # rewrites errorinputs_known_failures.py
"""
import re
import warnings

from . import opinfo_harness as ops


def load():
    """The OpInfos with error inputs, whose callable ember has (needs torch and expecttest)."""
    return [op for op in ops.load() if op.error_inputs_func is not None]


def _cases(op):
    for device in ("cpu", ops.torch.device("cpu")):  # OpInfos disagree on which they take
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return list(op.error_inputs(device))
        except Exception:  # noqa: BLE001 - torch's own generator failing is not ember's failure
            continue
    return []


def _aliased(v):
    """Whether two different torch tensors in v share storage (an out= that is a view of an input, say)."""
    seen = {}
    stack, tensors = [v], []
    while stack:
        x = stack.pop()
        if isinstance(x, ops.torch.Tensor):
            tensors.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    for t in tensors:
        try:
            ptr = t.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - meta and other storage-less tensors alias nothing here
            continue
        if ptr and ptr in seen and seen[ptr] is not t:
            return True
        seen[ptr] = t
    return False


def check_case(fn, case, dunder=False, torch_fn=None):
    """'raised', 'message' (raised, torch's message too), or a one-line reason the case fails; a case torch itself
    accepts (clamp_max with a Python number, which OpInfo lists as unsupported) is not compared."""
    s = case.sample_input
    if dunder and not isinstance(s.input, ops.torch.Tensor):  # Tensor.__radd__(2, t): no Python program's call
        return "not compared"
    if _aliased([s.input, list(s.args), dict(s.kwargs)]):  # views of one storage become separate ember arrays
        return "not compared"
    try:
        ins = ops.to_ember([s.input, list(s.args), dict(s.kwargs)])
    except ops.NotCompared:
        return "not compared"
    except (TypeError, ValueError):  # meta tensors, more dims than NumPy has: nothing to translate
        return "not compared"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(ins[0], *ins[1], **ins[2])
    except case.error_type as e:
        return "message" if re.search(case.error_regex, str(e)) else "raised"
    except Exception as e:  # noqa: BLE001 - another type than torch's is a failure to report
        return f"{type(e).__name__} instead of {case.error_type.__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    if torch_fn is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch_fn(s.input, *s.args, **s.kwargs)
            return "not compared"
        except Exception:  # noqa: BLE001 - torch raises, as the case says: ember's silence is the failure
            pass
    return f"accepted silently (torch: {case.error_type.__name__}: {case.error_regex[:100]})"


def check_op(op):
    """(cases compared, raised with torch's type, with torch's message too, first failure or None)."""
    try:
        fn = ops.ember_callable(op)
    except AttributeError:
        return 0, 0, 0, None
    if fn is None:
        return 0, 0, 0, None
    n = raised = message = 0
    first = None
    for k, case in enumerate(_cases(op)):
        r = check_case(fn, case, op.name.startswith("__"), op.op)
        if r == "not compared":
            continue
        n += 1
        if r in ("raised", "message"):
            raised += 1
            message += r == "message"
        elif first is None:
            first = f"case {k}: {r}"
    return n, raised, message, first


def main(argv):
    pattern = next((a for a in argv if not a.startswith("--")), "")
    totals = [0, 0, 0]
    bad = {}
    for op in load():
        if pattern not in ops.op_id(op):
            continue
        n, raised, message, first = check_op(op)
        totals = [totals[0] + n, totals[1] + raised, totals[2] + message]
        if first is not None:
            bad[ops.op_id(op)] = first
    for k, v in bad.items():
        print(f"{k}: {v}")
    n, raised, message = totals
    print(f"\n{raised} of {n} bad inputs raise torch's exception type ({100 * raised / max(n, 1):.1f}%), {message} "
          f"with torch's message; {len(bad)} ops have a case that does not")
    if "--write-known" in argv:
        ops.write_known("errorinputs", "OpInfo ops whose bad inputs", bad)


if __name__ == "__main__":
    ops.cli(main)
