"""random ops."""
__all__ = []
