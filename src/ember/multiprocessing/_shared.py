"""Moving tensor data into shared memory."""


def share_memory_(tensor):
    return tensor


def is_shared(tensor):
    return False
