"""Run under mpiexec by test_distributed.py: DistributedDataParallel checks; prints OK at the end."""
import datetime
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP


def check(cond, what):
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")


class WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
        self.extra = nn.Linear(3, 3)

    def forward(self, x, use_extra=False):
        out = self.body(x)
        if use_extra:
            out = out.sum() + self.extra(ember.ones(1, 3)).sum()
        return out


def net(seed, unused=False):
    ember.manual_seed(seed)
    if unused:
        return WithExtra()
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))


def data(steps, batch):
    rng = np.random.default_rng(123)
    return [(ember.tensor(rng.standard_normal((batch, 6)), dtype=ember.float32),
             ember.tensor(rng.standard_normal((batch, 2)), dtype=ember.float32)) for _ in range(steps)]


def same_params(a, b, what, tol=1e-5):
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        check(np.allclose(p.detach().numpy(), q.detach().numpy(), atol=tol, rtol=tol),
              f"{what}: parameter {n} differs by {np.abs(p.detach().numpy() - q.detach().numpy()).max()}")


def train_equivalence(r, n, **ddp_kwargs):
    ref = net(0)
    model = DDP(net(0 if r == 0 else 100 + r), **ddp_kwargs)  # other ranks start elsewhere: init broadcast
    same_params(model.module, ref, "after construction", tol=0)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for x, y in data(6, 8 * n):
        h = x.shape[0] // n
        opt.zero_grad()
        nn.functional.mse_loss(model(x[r * h:(r + 1) * h]), y[r * h:(r + 1) * h]).backward()
        opt.step()
        ropt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        ropt.step()
    same_params(model.module, ref, f"DDP {ddp_kwargs} vs one process on the full batch")
    return model


def main():
    try:
        DDP(net(0))
        check(False, "DDP without a process group")
    except ValueError as e:
        check("init_process_group" in str(e), "DDP before init message")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    r, n = dist.get_rank(), dist.get_world_size()

    m = train_equivalence(r, n)
    check(len(m._buckets) == 1, "default: one bucket")
    launches = []  # (buckets launched before, parameters ready, parameters) at each launch
    real = DDP._launch

    def spy(self):
        launches.append((self._next, sum(self._ready), len(self._ready)))
        return real(self)
    DDP._launch = spy
    try:
        m = train_equivalence(r, n, bucket_cap_mb=0.0001)
    finally:
        DDP._launch = real
    check(len(m._buckets) > 2, f"small buckets: {len(m._buckets)}")
    first = [x for x in launches if x[0] == 0]
    check(len(first) == 6 and all(ready < total for _, ready, total in first),
          f"the first bucket's all-reduce starts while backward still runs: {launches}")
    m = train_equivalence(r, n, bucket_cap_mb=0.0001, gradient_as_bucket_view=True)
    p0 = next(iter(m.module.parameters()))
    check(p0.grad is not None and np.shares_memory(p0.grad.numpy(), m._buckets[-1].flat), "grad is a bucket view")
    check(next(iter(m.state_dict())) == "module.0.weight", "state_dict keys")
    check(m.module is m._modules["module"], "module attribute")

    # no_sync: two local micro-batches, the third synchronises the accumulated sum
    ref = net(0)
    model = DDP(net(0))
    batches = data(3, 4 * n)
    for k, (x, y) in enumerate(batches):
        h = x.shape[0] // n
        nn.functional.mse_loss(ref(x), y).backward()
        if k < 2:
            with model.no_sync():
                nn.functional.mse_loss(model(x[r * h:(r + 1) * h]), y[r * h:(r + 1) * h]).backward()
        else:
            nn.functional.mse_loss(model(x[r * h:(r + 1) * h]), y[r * h:(r + 1) * h]).backward()
        if k == 1 and n > 1:
            g = [None] * n
            dist.all_gather_object(g, next(iter(model.parameters())).grad.numpy())
            check(not np.allclose(g[0], g[1]), "no_sync leaves gradients local")
    for p, q in zip(model.parameters(), ref.parameters()):
        check(np.allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5), "no_sync accumulation")

    # an unused parameter: torch's error at the next forward, naming it
    model = DDP(net(0, unused=True))
    x, y = data(1, 4)[0]
    nn.functional.mse_loss(model(x), y).backward()
    try:
        model(x)
        check(False, "unused parameter not reported")
    except RuntimeError as e:
        msg = str(e)
        check("Expected to have finished reduction in the prior iteration" in msg, msg)
        check("find_unused_parameters=True" in msg, msg)
        check(f"Parameters which did not receive grad for rank {r}: extra.weight, extra.bias" in msg, msg)
        check(f"Parameter indices which did not receive grad for rank {r}: 4 5" in msg, msg)

    # find_unused_parameters=True: trains, unused gradients stay None, the rest is exact
    ref = net(0, unused=True)
    model = DDP(net(0, unused=True), find_unused_parameters=True, bucket_cap_mb=0.0001)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1)
    for x, y in data(3, 4 * n):
        h = x.shape[0] // n
        opt.zero_grad()
        nn.functional.mse_loss(model(x[r * h:(r + 1) * h]), y[r * h:(r + 1) * h]).backward()
        opt.step()
        ropt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        ropt.step()
    check(model.module.extra.weight.grad is None, "globally unused parameter keeps grad None")
    same_params(model.module, ref, "find_unused_parameters")

    # a parameter used on rank 0 only: every rank ends with rank 0's gradient / world size
    model = DDP(net(0, unused=True), find_unused_parameters=True)
    x = ember.ones(2, 6)
    model(x, use_extra=(r == 0)).sum().backward()
    g = model.module.extra.bias.grad
    check(g is not None and np.allclose(g.numpy(), 1.0 / n), f"partly used parameter: {g}")

    # buffers follow rank 0 at every forward
    model = nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4))
    model = DDP(model)
    model.module[1].running_mean.fill_(float(r + 5))
    model(ember.ones(3, 6))
    rm = model.module[1].running_mean.numpy()
    all_rm = [None] * n
    dist.all_gather_object(all_rm, rm)
    check(all(np.allclose(a, all_rm[0]) for a in all_rm), "buffers broadcast before forward")

    # different models across ranks are refused at construction, on every rank
    try:
        DDP(nn.Linear(3, 3 + (r > 0)))
        check(n == 1, "mismatched models accepted")
    except RuntimeError as e:
        check("DDP expects same model across all ranks" in str(e), str(e))

    dist.destroy_process_group()
    print(f"OK rank {r}", flush=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
