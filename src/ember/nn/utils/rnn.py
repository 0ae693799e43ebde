"""Packed sequences: same as torch.nn.utils.rnn."""
__all__ = []
