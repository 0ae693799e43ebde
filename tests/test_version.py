"""ember.__version__: torch's API version with ember's release as local label, compared as a version."""
import pytest

import ember
from ember._version import EMBER_RELEASE, TORCH_API, TorchVersion


def test_version_names_the_torch_api_and_the_ember_release():
    assert ember.__version__ == f"{TORCH_API}+ember.{EMBER_RELEASE}"
    assert isinstance(ember.__version__, str) and isinstance(ember.__version__, TorchVersion)


@pytest.mark.parametrize("other,expected", [
    ((2, 0), True), ("2.0", True), ("1.12.1", True), ((2, 13), True), ("2.13.0", True), ("2.13.1", False),
    ((3,), False), ("2.14.0a0", False), ("2.13.0rc1", True),
])
def test_ge_compares_as_versions(other, expected):
    assert (ember.__version__ >= other) is expected


def test_ordering_of_pre_dev_post_and_local_parts():
    v = TorchVersion
    chain = ["2.1.0.dev20230101", "2.1.0a0", "2.1.0b1", "2.1.0rc1", "2.1.0", "2.1.0.post1"]
    assert all(v(a) < b for a, b in zip(chain, chain[1:]))
    assert v("2.1.0") < "2.1.0+cpu"               # a local label sorts after the bare release
    assert v("1.9.0") < "1.10.0"                  # numerically, not as text
    assert v("2.0") >= (2, 0, 0) and v("2.0") <= "2.0.0"


def test_equality_stays_string_equality_and_hash_is_str_hash():
    v = TorchVersion("2.13.0+cpu")
    assert v == "2.13.0+cpu" and v != "2.13"
    assert hash(v) == hash("2.13.0+cpu")


def test_invalid_version_raises_value_error():
    with pytest.raises(ValueError, match="Invalid version: 'abc'"):
        ember.__version__ >= "abc"
