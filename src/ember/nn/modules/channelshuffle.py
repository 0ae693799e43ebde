"""nn modules: channelshuffle."""
__all__ = []
