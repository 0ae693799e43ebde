"""ember's version string, which compares as a version the way torch's does."""
import re

__all__ = ["TorchVersion", "__version__"]

# ember implements the public API of this PyTorch release; programs check torch.__version__ to pick code paths,
# so that is the version ember reports, with its own release as the local label (as torch's "+cpu")
TORCH_API = "2.13.0"
EMBER_RELEASE = "0.1.0"

_PATTERN = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d*))?(?:[-_.]?(post)[-_.]?(\d*))?"
                      r"(?:[-_.]?(dev)[-_.]?(\d*))?(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?", re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


def _key(text):
    """A sort key of a PEP 440 version string (release, pre/post/dev release, local label)."""
    m = _PATTERN.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"Invalid version: '{text}'")
    release, pre, pre_n, post, post_n, dev, dev_n, local = m.groups()
    nums = [int(p) for p in release.split(".")]
    while len(nums) > 1 and nums[-1] == 0:
        nums.pop()
    # a dev release sorts before its pre-releases, which sort before the release, which sorts before post releases
    if pre is not None:
        pre_k = (_PRE[pre.lower()], int(pre_n or 0))
    elif dev is not None and post is None:
        pre_k = (-1, 0)
    else:
        pre_k = (3, 0)
    post_k = int(post_n or 0) if post is not None else -1
    dev_k = int(dev_n or 0) if dev is not None else float("inf")
    local_k = tuple((0, int(p)) if p.isdigit() else (-1, p.lower()) for p in re.split(r"[-_.]", local)) \
        if local else ()
    return tuple(nums), pre_k, post_k, dev_k, local_k


def _other_key(other):
    if isinstance(other, tuple):
        other = ".".join(str(p) for p in other)
    if not isinstance(other, str):
        return NotImplemented
    return _key(other)


class TorchVersion(str):
    """Same as `torch.torch_version.TorchVersion`: a str whose <, <=, >, >= compare as versions, against version
    strings or tuples of ints (`ember.__version__ >= (2, 1)`). == stays string equality, as in torch."""

    def _cmp(self, other, op):
        k = _other_key(other)
        if k is NotImplemented:
            return NotImplemented
        return op(_key(self), k)

    def __lt__(self, other):
        return self._cmp(other, tuple.__lt__)

    def __le__(self, other):
        return self._cmp(other, tuple.__le__)

    def __gt__(self, other):
        return self._cmp(other, tuple.__gt__)

    def __ge__(self, other):
        return self._cmp(other, tuple.__ge__)

    __hash__ = str.__hash__


__version__ = TorchVersion(f"{TORCH_API}+ember.{EMBER_RELEASE}")
