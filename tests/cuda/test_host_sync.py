"""A training step on CUDA never makes the host wait for the GPU: nothing between zero_grad() and step() reads device
values on the host. Checks that need device values (indices in range...) are reported at the next synchronization,
with the CPU's error."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._backend import deferred

# Host reads a step may still make, each with its reason. Empty: none remain.
ALLOWED_READS = ()


class _TinyTransformer(nn.Module):
    def __init__(self, vocab=11, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, 4, 32, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, x):
        causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device).isinf()
        h = self.enc(self.emb(x), mask=causal, src_key_padding_mask=x == 0)
        return self.head(h).flatten(0, 1)


class _LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True, dropout=0.2)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.LayerNorm(16), nn.Linear(16, 3))


def _cnn():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(4, 3))


def _batch(name):
    g = np.random.default_rng(0)
    if name == "transformer":
        x = g.integers(1, 11, (3, 5))
        x[0, 3:] = 0  # padding
        y = g.integers(0, 11, 15)
        y[3:5] = -100  # ignored targets
        return x, y
    shapes = {"mlp": (8, 6), "cnn": (4, 2, 8, 8), "lstm": (3, 4, 6)}
    return g.standard_normal(shapes[name]).astype(np.float32), g.integers(0, 3, shapes[name][0])


_MODELS = {"mlp": _mlp, "cnn": _cnn, "transformer": _TinyTransformer, "lstm": _LSTMClassifier}
_OPTIMIZERS = {"sgd": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
               "adam": lambda p: ember.optim.Adam(p, lr=1e-3),
               "adamw": lambda p: ember.optim.AdamW(p, lr=1e-3, weight_decay=0.01)}


def _allowed(log):
    return [r for r in log if not any(a in r[1] for a, _ in ALLOWED_READS)]


def _steps(host_reads, model_name, opt_name, scaler=None, steps=3):
    ember.manual_seed(0)
    model = _MODELS[model_name]().to("cuda")
    opt = _OPTIMIZERS[opt_name](model.parameters())
    x, y = (ember.tensor(a, device="cuda") for a in _batch(model_name))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        host_reads.counting = True
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1 if model_name == "transformer" else 0.0)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
        else:
            loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if scaler is None:
            opt.step()
        host_reads.counting = False
        if scaler is not None:
            scaler.step(opt)  # torch's step() reads found_inf once: allowed there
            scaler.update()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("opt_name", sorted(_OPTIMIZERS))
@pytest.mark.parametrize("model_name", sorted(_MODELS))
def test_training_step_never_reads_the_device(host_reads, model_name, opt_name):
    losses = _steps(host_reads, model_name, opt_name)
    assert not _allowed(host_reads.log), host_reads.report()
    assert all(np.isfinite(losses))


@pytest.mark.parametrize("model_name", sorted(_MODELS))
def test_grad_scaler_step_never_reads_the_device(host_reads, model_name):
    scaler = ember.amp.GradScaler("cuda", init_scale=2.0 ** 10, growth_interval=2)
    losses = _steps(host_reads, model_name, "adamw", scaler)
    assert not _allowed(host_reads.log), host_reads.report()
    assert all(np.isfinite(losses))
    assert scaler.get_scale() == 2.0 ** 11  # grown once after two clean steps, on the device


def test_the_counter_sees_host_reads(host_reads):
    x = ember.ones(3, device="cuda")
    host_reads.counting = True
    x.sum().item()
    bool(x[0])
    x.cpu()
    float(x[1])
    assert host_reads.count == 4, host_reads.report()


def test_training_matches_cpu_with_ignored_targets(gpu):
    # the device path of cross_entropy (mask and mean on the GPU) gives the CPU's numbers
    y = np.random.default_rng(0).integers(0, 11, 15)
    y[3:5] = -100
    out = []
    for dev in ("cpu", "cuda"):
        ember.manual_seed(0)
        logits = ember.tensor(np.random.default_rng(1).standard_normal((15, 11)).astype(np.float32), device=dev,
                              requires_grad=True)
        loss = F.cross_entropy(logits, ember.tensor(y, device=dev), label_smoothing=0.1)
        loss.backward()
        out.append((loss.item(), logits.grad.cpu().numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-7)


def test_all_targets_ignored_gives_nan_on_both_devices(gpu):
    for dev in ("cpu", "cuda"):
        logits = ember.zeros(2, 3, device=dev, requires_grad=True)
        loss = F.cross_entropy(logits, ember.tensor([-100, -100], device=dev))
        assert np.isnan(loss.item())


# ---------------------------------------------------------------- deferred checks
def _cases():
    """(name, op on a device, the error torch's CPU path raises at once)."""
    t3 = ember.tensor([0, 5, 1])
    return [
        ("cross_entropy", lambda d: F.cross_entropy(ember.zeros(3, 4, device=d), t3.to(d)), IndexError,
         "Target 5 is out of bounds."),
        ("nll_loss", lambda d: F.nll_loss(ember.zeros(3, 4, device=d), ember.tensor([0, -1, 1], device=d)),
         IndexError, "Target -1 is out of bounds."),
        ("embedding", lambda d: F.embedding(t3.to(d), ember.zeros(4, 2, device=d)), IndexError,
         "index out of range in self"),
        ("gather", lambda d: ember.zeros(2, 3, device=d).gather(1, ember.tensor([[0], [7]], device=d)),
         RuntimeError, "index 7 is out of bounds for dimension 1 with size 3"),
        ("scatter_add", lambda d: ember.zeros(4, device=d).scatter_add(0, ember.tensor([1, -2], device=d),
                                                                        ember.ones(2, device=d)),
         RuntimeError, "index -2 is out of bounds for dimension 0 with size 4"),
        ("index_select", lambda d: ember.zeros(3, 2, device=d).index_select(0, t3.to(d)), RuntimeError,
         "INDICES element is out of DATA bounds, id=5 axis_dim=3"),
        ("index_add", lambda d: ember.zeros(3, 2, device=d).index_add(0, t3.to(d), ember.ones(3, 2, device=d)),
         RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
        ("index_copy", lambda d: ember.zeros(3, device=d).index_copy(0, t3.to(d), ember.ones(3, device=d)),
         IndexError, "index_copy_(): index 5 is out of bounds for dimension 0 with size 3"),
        ("getitem", lambda d: ember.zeros(3, 2, device=d)[t3.to(d)], IndexError,
         "index 5 is out of bounds for dimension 0 with size 3"),
        ("getitem_2nd_dim", lambda d: ember.zeros(2, 3, device=d)[:, ember.tensor([-4, 0], device=d)], IndexError,
         "index -4 is out of bounds for dimension 0 with size 3"),
        ("one_hot", lambda d: F.one_hot(t3.to(d), 4), RuntimeError, "Class values must be smaller than num_classes."),
        ("multi_margin_loss", lambda d: F.multi_margin_loss(ember.zeros(3, 4, device=d), t3.to(d)), RuntimeError,
         "target out of range"),
        ("gaussian_nll_loss", lambda d: F.gaussian_nll_loss(ember.zeros(2, device=d), ember.zeros(2, device=d),
                                                            ember.tensor([1.0, -1.0], device=d)),
         ValueError, "var has negative entry/entries"),
        ("take", lambda d: ember.zeros(2, 2, device=d).take(ember.tensor([0, -5], device=d)), IndexError,
         "out of range: tried to access index -5 on a tensor of 4 elements."),
        ("binary_cross_entropy", lambda d: F.binary_cross_entropy(ember.tensor([0.5, 1.5], device=d),
                                                                  ember.zeros(2, device=d)),
         RuntimeError, "all elements of input should be between 0 and 1"),
        ("max_unpool1d", lambda d: F.max_unpool1d(ember.ones(1, 1, 2, device=d), ember.tensor([[[0, 9]]], device=d),
                                                  2), RuntimeError,
         "Found an invalid max index: 9 (output volumes are of size 4"),
        ("quantile", lambda d: ember.ones(3, device=d).quantile(ember.tensor([0.5, 2.0], device=d)), RuntimeError,
         "quantile() q values must be in the range [0, 1]"),
        ("int_division", lambda d: ember.tensor([4, 2], device=d) // ember.tensor([2, 0], device=d), RuntimeError,
         "ZeroDivisionError"),
    ]


_CASES = _cases()


@pytest.mark.parametrize("name, op, exc, message", _CASES, ids=[c[0] for c in _CASES])
def test_cpu_raises_at_once(name, op, exc, message):
    with pytest.raises(exc, match="^" + _escape(message) + "$"):
        op("cpu")


@pytest.mark.parametrize("name, op, exc, message", _CASES, ids=[c[0] for c in _CASES])
def test_cuda_raises_at_the_next_synchronization(host_reads, name, op, exc, message):
    host_reads.counting = True
    r = op("cuda")  # queued: nothing read, nothing raised, nothing out of bounds touched
    host_reads.counting = False
    assert host_reads.count == 0, host_reads.report()
    with pytest.raises(exc, match="^" + _escape(message) + "$"):
        r.sum().item()
    ember.ones(1, device="cuda").item()  # reported once


def _escape(s):
    import re
    return re.escape(s)


@pytest.mark.parametrize("sync", ["item", "cpu", "tolist", "numpy", "repr", "synchronize", "stream", "bool"])
def test_every_synchronization_reports(gpu, sync):
    y = F.cross_entropy(ember.zeros(2, 3, device="cuda"), ember.tensor([0, 3], device="cuda"))
    do = {"item": lambda: y.item(), "cpu": lambda: y.cpu(), "tolist": lambda: y.tolist(),
          "numpy": lambda: y.numpy(force=True), "repr": lambda: repr(y), "synchronize": ember.cuda.synchronize,
          "stream": lambda: ember.cuda.current_stream().synchronize(), "bool": lambda: bool(y)}[sync]
    with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\.$"):
        do()


def test_the_first_failure_is_reported(gpu):
    x = ember.zeros(3, 2, device="cuda")
    x.index_select(0, ember.tensor([0, 1], device="cuda"))
    F.embedding(ember.tensor([9], device="cuda"), x)
    x.gather(0, ember.tensor([[4, 0]], device="cuda"))
    with pytest.raises(IndexError, match="^index out of range in self$"):
        ember.cuda.synchronize()
    ember.cuda.synchronize()  # all were read: the later failure is not reported again


def test_many_checks_without_synchronizing_stay_bounded(gpu):
    w = ember.zeros(4, 2, device="cuda")
    good, bad = ember.tensor([0, 3], device="cuda"), ember.tensor([2, 8], device="cuda")
    for i in range(3 * deferred._FOLD_AT):
        F.embedding(bad if i == deferred._FOLD_AT + 7 else good, w)
        F.cross_entropy(w, ember.tensor([0, 1, 0, 1], device="cuda"))
    assert sum(len(e[2]) for e in deferred._pending.values()) <= deferred._FOLD_AT
    with pytest.raises(IndexError, match="^index out of range in self$"):
        ember.cuda.synchronize()


def test_out_of_range_work_is_safe_meanwhile(gpu):
    # the op runs on clipped indices (no crash, no write outside the tensor) until the error is reported
    x = ember.arange(6.0, device="cuda").reshape(3, 2).requires_grad_()
    y = F.embedding(ember.tensor([1, 7, -9], device="cuda"), x)
    y.sum().backward()
    assert tuple(x.grad.shape) == (3, 2)
    with pytest.raises(IndexError):
        ember.cuda.synchronize()


def test_launch_blocking_checks_at_once(gpu, monkeypatch):
    monkeypatch.setattr(deferred, "BLOCKING", [True])  # what CUDA_LAUNCH_BLOCKING=1 sets at import
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.cross_entropy(ember.zeros(3, 4, device="cuda"), ember.tensor([0, 5, 1], device="cuda"))
    assert not deferred._pending


def test_valid_input_reports_nothing(gpu):
    x = ember.zeros(3, 4, device="cuda")
    F.cross_entropy(x, ember.tensor([0, 3, -100], device="cuda"))
    x.gather(1, ember.tensor([[0], [3], [1]], device="cuda"))
    x[ember.tensor([-3, 2], device="cuda")]
    ember.cuda.synchronize()
    assert not deferred._pending
