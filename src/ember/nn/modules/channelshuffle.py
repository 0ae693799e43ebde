"""nn modules: channel shuffle."""
from .._functional.vision import channel_shuffle
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Same as `torch.nn.ChannelShuffle`."""
    __constants__ = ("groups",)

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
