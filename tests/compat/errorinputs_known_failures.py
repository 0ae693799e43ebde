"""OpInfo ops with a bad input ember does not reject as torch does, with the first such case (errorinputs_harness.py
regenerates this: python -m tests.compat.errorinputs_harness --write-known)."""

KNOWN = {
    'aminmax': 'case 3: accepted silently (torch: RuntimeError: Expected out tensor to have dtype float, but got double instead)',
    'cat': 'case 0: accepted silently (torch: RuntimeError: unsupported operation)',
    'clamp_max': 'case 0: accepted silently (torch: Exception: )',
    'clamp_min': 'case 0: accepted silently (torch: Exception: )',
    'complex': "case 2: accepted silently (torch: RuntimeError: Expected object of scalar type ComplexDouble but got scalar type ComplexFloat for argument 'out')",
    'gather': 'case 1: accepted silently (torch: RuntimeError: Expected out tensor to have dtype)',
    'index_select': 'case 0: accepted silently (torch: RuntimeError: unsupported operation)',
    'masked_fill': 'case 2: accepted silently (torch: RuntimeError: value cannot be converted to type .* without overflow)',
    'masked_select': 'case 0: accepted silently (torch: RuntimeError: unsupported operation)',
    'narrow_copy': 'case 1: IndexError instead of RuntimeError: Dimension out of range (expected to be in range of [-3, 2], but got 3)',
    'take': "case 0: TypeError instead of RuntimeError: take() got an unexpected keyword argument 'out'",
}
