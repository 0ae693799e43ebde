"""Bad inputs that ember once accepted silently or answered with NumPy's own errors: torch's exception types and
messages (torch 2.13)."""
import pytest

import ember
import ember.nn.functional as F


@pytest.mark.parametrize("call, exc, message", [
    (lambda: F.triplet_margin_loss(ember.ones(2, 3), ember.ones(2, 3), ember.ones(2, 3), margin=-1.0), ValueError,
     "margin must be greater than 0, got -1.0"),
    (lambda: F.adaptive_avg_pool2d(ember.ones(1, 2, 4, 4), (-1, 0)), RuntimeError,
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, 0}"),
    (lambda: F.adaptive_avg_pool1d(ember.ones(1, 2, 4), -1), RuntimeError, "but received {1, -1}"),
    (lambda: F.adaptive_max_pool2d(ember.ones(1, 2, 4, 4), (-1, 0)), RuntimeError,
     "Trying to create tensor with negative dimension -1: [1, 2, -1, 0]"),
    (lambda: F.max_pool1d(ember.ones(1, 0, 4), 2), RuntimeError,
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 0, 4]"),
    (lambda: F.avg_pool1d(ember.ones(1, 0, 4), 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 0, 1, 4]"),
    (lambda: F.max_pool3d(ember.ones(1, 2, 0, 4, 4), 2), RuntimeError,
     "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to have positive length, "
     "but input has a shape of [1, 2, 0, 4, 4] and non-batch dimension 0 has length zero!"),
    (lambda: F.max_pool1d(ember.ones(1, 1, 4), 2, padding=-1), RuntimeError,
     "max_pool1d() padding must be non-negative, but got -1"),
    (lambda: F.avg_pool2d(ember.ones(1, 1, 4, 4), 2, padding=-1), RuntimeError,
     "pad must be non-negative, but got pad: -1"),
    (lambda: F.multilabel_margin_loss(ember.ones(0), ember.ones(0, dtype=ember.int64)), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [0]"),
    (lambda: F.embedding(ember.tensor([0, 1]), ember.ones(2, 3, 4)), RuntimeError, "'weight' must be 2-D"),
    (lambda: F.embedding(ember.tensor([0, 1]), ember.tensor(1.0)), RuntimeError, "'weight' must be 2-D"),
    (lambda: ember.cat((ember.ones(2), None)), TypeError,
     "expected Tensor as element 1 in argument 0, but got NoneType"),
    (lambda: ember.arange(5.0).narrow(0, True, 2), TypeError, "narrow() received an invalid combination"),
    (lambda: ember.empty(3).cauchy_(0, 0), RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=0"),
])
def test_bad_inputs_raise_torchs_errors(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert message in str(info.value)


def test_max_pool_of_an_empty_batch_is_fine():
    assert F.max_pool2d(ember.ones(0, 1, 4, 4), 2).shape == (0, 1, 2, 2)


_OVERLAP = "some elements of the input tensor and the written-to tensor refer to a single memory location"


@pytest.mark.parametrize("call", [
    lambda a: ember.gather(a, 0, ember.zeros(2, dtype=ember.int64), out=a[:2]),
    lambda a: ember.masked_select(a, a > 0, out=a),
    lambda a: ember.kthvalue(a, 1, out=(a[:1].view(()), ember.zeros((), dtype=ember.int64))),
    lambda a: ember.cat((a[:1], a[1:2]), out=a[:2]),
], ids=["gather", "masked_select", "kthvalue", "cat"])
def test_out_overlapping_an_input_is_refused_and_nothing_written(call):
    a = ember.arange(4.0)
    with pytest.raises(RuntimeError, match=_OVERLAP):
        call(a)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_out_of_separate_memory_and_multinomials_out_dtype():
    out = ember.empty(4)
    assert ember.cat((ember.ones(2), ember.zeros(2)), out=out) is out and out.tolist() == [1, 1, 0, 0]
    with pytest.raises(RuntimeError, match="multinomial expects Long tensor out, got: Float"):
        ember.multinomial(ember.ones(3), 2, out=ember.empty(2))
