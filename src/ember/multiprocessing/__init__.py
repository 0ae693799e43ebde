"""ember.multiprocessing: a drop-in for multiprocessing in which tensors travel through shared memory."""
