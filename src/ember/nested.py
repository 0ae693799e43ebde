"""ember.nested: torch.nested's names, each raising a clear error when called (see ember._unavailable)."""
from ._unavailable import unavailable

__getattr__ = unavailable(
    "torch.nested", "ember has no nested (jagged) tensors. Pad the sequences to one length "
    "(ember.nn.utils.rnn.pad_sequence) and carry a mask or the lengths (pack_padded_sequence)")
