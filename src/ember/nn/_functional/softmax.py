"""nn.functional: softmax."""
__all__ = []
