"""A user's program sees no warning from ember, on whatever NumPy and Python are installed: an ordinary training
step in a fresh interpreter with every warning an error (PYTHONWARNINGS reaches the DataLoader's workers too)."""
import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import io
    import ember as torch
    import ember.nn as nn
    import ember.nn.functional as F
    from ember.utils.data import DataLoader, TensorDataset

    x = torch.randn(4, 3, requires_grad=True)
    y = (x.t().reshape(12).view(3, 4).tanh() * 2 + 1).sum()
    y.backward()
    text = [repr(t) for t in (x, x.double(), x.half(), x.bfloat16(), x.to(torch.complex64), torch.arange(10) > 4,
                              torch.randn(200, 300), torch.tensor([1e-8, 1e8, float("nan")]), torch.tensor(3.5))]

    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(32, 1, 8, 8), torch.randint(0, 10, (32,)))
    for xb, yb in DataLoader(data, batch_size=8, num_workers=2, shuffle=True):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    model.load_state_dict(torch.load(buf))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model(torch.randn(2, 1, 8, 8)).dtype == torch.bfloat16

    lstm = nn.LSTM(5, 7, 2, batch_first=True)
    lstm(torch.randn(2, 6, 5))[0].sum().backward()
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    enc(torch.randn(2, 5, 16), mask=nn.Transformer.generate_square_subsequent_mask(5)).sum().backward()
    torch.fft.rfft(torch.randn(8)), torch.special.erfcx(torch.randn(3)), torch.linalg.svd(torch.randn(3, 3))
    torch.distributions.Normal(0, 1).log_prob(torch.randn(3)), torch.quantile(torch.randn(10), 0.3)
    print("ok", loss.item())
""")


def test_a_training_program_runs_without_a_warning():
    env = dict(os.environ, PYTHONWARNINGS="error")
    r = subprocess.run([sys.executable, "-W", "error", "-c", PROGRAM], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok "), r.stdout
    assert r.stderr == ""
