"""comparison ops."""
__all__ = []
