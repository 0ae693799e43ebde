import warnings

import pytest

import ember
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def _grads(fn, x, lin):
    x.grad = None
    lin.zero_grad()
    fn(x).sum().backward()
    return x.grad.clone(), lin.weight.grad.clone()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gives_the_plain_gradients(use_reentrant):
    ember.manual_seed(0)
    lin = ember.nn.Linear(4, 4)
    x = ember.randn(3, 4, requires_grad=True)

    def block(a, scale):
        return ember.relu(lin(a)) * scale
    ref = _grads(lambda a: block(a, 2.0), x, lin)
    got = _grads(lambda a: checkpoint(block, a, 2.0, use_reentrant=use_reentrant), x, lin)
    assert ember.allclose(ref[0], got[0]) and ember.allclose(ref[1], got[1])


def test_reentrant_checkpoint_records_one_node_and_replays_dropout():
    x = ember.randn(50, requires_grad=True)
    y = checkpoint(lambda a: ember.nn.functional.dropout(a, 0.5) * 3, x, use_reentrant=True)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    y.sum().backward()
    # the recomputation draws the forward's mask: gradient is 6 where the output kept x, else 0
    assert ember.equal(y != 0, x.grad != 0) and set(x.grad.unique().tolist()) <= {0.0, 6.0}


def test_checkpoint_warnings_and_argument_errors():
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(lambda a: a * 2, ember.ones(2), use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: b$"):
        checkpoint(lambda a, b=1: a * b, x, use_reentrant=True, b=2)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checkpoint(lambda a, b=1: a * b, x, use_reentrant=False, b=3).tolist() == [3.0, 3.0]


def test_multiple_outputs():
    x = ember.ones(2, requires_grad=True)
    a, b = checkpoint(lambda t: (t * 2, t + 1), x, use_reentrant=True)
    (a.sum() + 3 * b.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_checkpoint_sequential_matches_plain_run():
    ember.manual_seed(0)
    seq = ember.nn.Sequential(*[ember.nn.Linear(3, 3) for _ in range(5)])
    x = ember.randn(2, 3, requires_grad=True)
    y = checkpoint_sequential(seq, 2, x, use_reentrant=True)
    y.sum().backward()
    g = x.grad.clone()
    x.grad = None
    y2 = seq(x)
    y2.sum().backward()
    assert ember.allclose(y, y2) and ember.allclose(g, x.grad)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(seq, 2, x, use_reentrant=True, foo=1)


def test_detach_variable_keeps_requires_grad():
    from ember.utils.checkpoint import detach_variable
    x = ember.ones(1, requires_grad=True) * 2
    d, n = detach_variable((x, 3))
    assert d.requires_grad and d.is_leaf and n == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        detach_variable([x])

