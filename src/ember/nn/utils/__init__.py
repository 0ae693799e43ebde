"""ember.nn.utils: same as torch.nn.utils."""
from . import rnn
