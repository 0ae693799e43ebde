"""nn modules: pixelshuffle."""
__all__ = []
