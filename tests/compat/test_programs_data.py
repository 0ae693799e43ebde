"""Real programs in the data, serialization and top-level utility area, run with torch and with ember.

Each program takes the library as a parameter and returns a dict of library-neutral values; the test runs it with
both and compares. Values that depend on random draws are compared within each library (ember's random numbers
are not torch's), and object reprs are left out.
"""
import collections
import dataclasses
import io
import math
import os
import pathlib
import random
import tempfile
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning"),
              pytest.mark.filterwarnings("ignore:'pin_memory' argument is set as true:UserWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


def _norm(v):
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        vals = v.detach().cpu().numpy().tolist() if v.numel() < 200 else None
        return ("T", str(v.dtype).replace("ember.", "torch."), tuple(v.shape), vals)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and not isinstance(v, (torch.Size, ember.Size)):
        return (type(v).__name__, [_norm(x) for x in v])
    if isinstance(v, (str, torch.dtype, ember.dtype, torch.Size, ember.Size)):
        return str(v).replace("ember", "torch")
    if isinstance(v, np.ndarray):
        return ("np", v.dtype.str, v.tolist())
    return v


def cap(f):
    """A call's result, or its exception's type and message."""
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return ("EXC", type(e).__name__, str(e).replace("ember", "torch")[:300])


def cap_type(f):
    """Only the exception type, or the result's type."""
    r = cap(f)
    return r[:2] if r[0] == "EXC" else ("ok", type(r[1]).__name__)


def compare(program):
    got = {}
    for lib in (ember, torch):  # ember first: its workers fork before torch's loaders exist
        got[lib.__name__] = _norm(program(lib))
    e, t = got["ember"], got["torch"]
    assert e.keys() == t.keys()
    bad = {k: (t[k], e[k]) for k in t if t[k] != e[k]}
    assert not bad, bad


def prog_collate(torch):
    D = torch.utils.data; Dataset, DataLoader, default_collate = D.Dataset, D.DataLoader, D.default_collate
    Point = collections.namedtuple("Point", "x y")
    class DS(Dataset):
        def __init__(self, n): self.n = n
        def __len__(self): return self.n
        def __getitem__(self, i):
            return {"img": torch.full((2, 3), float(i)), "label": i, "name": f"s{i}", "w": float(i) / 2,
                    "arr": np.arange(3, dtype=np.float32) + i, "pt": Point(i, torch.tensor([i, i])),
                    "nested": [torch.tensor(i), (i, "a")], "flag": i % 2 == 0, "np_scalar": np.float64(i),
                    "np_int": np.int32(i)}
    dl = DataLoader(DS(7), batch_size=3, shuffle=False, drop_last=False)
    out = {"len": len(dl)}
    for k, b in enumerate(dl):
        out[f"b{k}"] = {kk: v for kk, v in b.items()}
        out[f"b{k}_types"] = {kk: type(v).__name__ for kk, v in b.items()}
        out[f"b{k}_pt"] = type(b["pt"]).__name__
    dl2 = DataLoader(DS(7), batch_size=3, drop_last=True)
    out["len2"] = len(dl2)
    out["n2"] = sum(1 for _ in dl2)
    out["dc_tuple"] = default_collate([(1, 2.0), (3, 4.0)])
    out["dc_bytes"] = cap(lambda: default_collate([b"a", b"b"]))
    out["dc_none"] = cap(lambda: default_collate([None, None]))
    out["dc_obj"] = cap(lambda: default_collate([object(), object()]))
    out["dc_mismatch"] = cap(lambda: default_collate([[1, 2], [1, 2, 3]]))
    out["dc_tensor_mismatch"] = cap(lambda: default_collate([torch.zeros(2), torch.zeros(3)]))
    out["dc_npstr"] = cap(lambda: default_collate([np.array(["a"]), np.array(["b"])]))
    out["dc_bool"] = default_collate([True, False])
    out["dc_np0d"] = default_collate([np.array(1.5), np.array(2.5)])
    out["dc_np_bool"] = default_collate([np.bool_(True), np.bool_(False)])
    out["dc_dtypes"] = [str(default_collate([1, 2]).dtype), str(default_collate([1.0, 2.0]).dtype)]
    out["dc_f16"] = default_collate([np.float16(1), np.float16(2)])
    return out


def prog_loader_misc(torch):
    D = torch.utils.data; DataLoader, TensorDataset, get_worker_info = D.DataLoader, D.TensorDataset, D.get_worker_info
    x = torch.arange(10, dtype=torch.float32).view(10, 1); y = torch.arange(10) % 3
    ds = TensorDataset(x, y)
    out = {"len_ds": len(ds), "item": ds[3], "wi": get_worker_info()}
    dl = DataLoader(ds, batch_size=4)
    out["batches"] = [b for b in dl]
    out["bad_td"] = cap(lambda: TensorDataset(torch.zeros(3), torch.zeros(4)))
    dl3 = DataLoader(ds, batch_size=None)
    out["bn"] = [b for b in dl3][:2]
    out["len_bn"] = len(dl3)
    out["collate_fn"] = [b for b in DataLoader(ds, batch_size=5, collate_fn=lambda b: len(b))]
    out["list_ds"] = [b for b in DataLoader([1, 2, 3, 4, 5], batch_size=2)]
    out["list_ds_tuple"] = [b for b in DataLoader([(1, "a"), (2, "b")], batch_size=2)]
    out["shuffle_err"] = cap(lambda: DataLoader(ds, batch_size=2, shuffle=True, sampler=[0, 1]))
    out["bs_err"] = cap(lambda: DataLoader(ds, batch_size=0))
    out["nw_err"] = cap(lambda: DataLoader(ds, num_workers=-1))
    out["pw_err"] = cap(lambda: DataLoader(ds, persistent_workers=True))
    out["pf_err"] = cap(lambda: DataLoader(ds, prefetch_factor=2))
    out["attrs"] = (dl.batch_size, dl.drop_last, dl.num_workers, type(dl.sampler).__name__,
                    type(dl.batch_sampler).__name__, dl.pin_memory, dl.timeout, dl.prefetch_factor,
                    dl.persistent_workers, type(dl.dataset).__name__, dl.collate_fn.__name__)
    it = iter(dl)
    out["it_len"] = len(it)
    out["it_type"] = type(it).__name__
    next(it)
    out["next_it"] = next(it)
    dl_s = DataLoader(ds, batch_size=3, shuffle=True)
    out["sampler_shuffle"] = type(dl_s.sampler).__name__
    torch.manual_seed(0)
    a = torch.cat([b[1] for b in dl_s]).sort().values
    out["shuf_all"] = a
    return out


def make_iter(torch):
    D = torch.utils.data
    class Range(D.IterableDataset):
        def __init__(self, start, end): super().__init__(); self.start, self.end = start, end
        def __iter__(self):
            info = D.get_worker_info()
            if info is None:
                s, e = self.start, self.end
            else:
                per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
                s = self.start + info.id * per; e = min(s + per, self.end)
            return iter(range(s, e))
    return Range


def wif(wid):
    import numpy as np
    np.random.seed(wid)


def prog_iterable(torch):
    D = torch.utils.data
    Range = make_iter(torch)
    ds = Range(3, 10)
    out = {}
    out["main"] = list(D.DataLoader(ds))
    out["w2"] = list(D.DataLoader(ds, num_workers=2))
    out["w2b"] = [b for b in D.DataLoader(ds, num_workers=2, batch_size=2)]
    out["w2b_drop"] = [b for b in D.DataLoader(ds, num_workers=2, batch_size=2, drop_last=True)]
    out["len_err"] = cap(lambda: len(D.DataLoader(ds)))
    out["shuffle_err"] = cap(lambda: D.DataLoader(ds, shuffle=True))
    out["sampler_err"] = cap(lambda: D.DataLoader(ds, sampler=[1, 2]))
    out["bs_err"] = cap(lambda: D.DataLoader(ds, batch_sampler=[[1, 2]]))
    out["getitem"] = cap(lambda: ds[0])
    out["chain"] = list(D.ChainDataset([Range(0, 2), Range(5, 7)]))
    out["add"] = type(Range(0, 2) + Range(5, 7)).__name__
    out["isinst"] = isinstance(ds, D.Dataset)
    return out


def prog_workers(torch):
    D = torch.utils.data
    class DS(D.Dataset):
        def __len__(self): return 10
        def __getitem__(self, i):
            info = D.get_worker_info()
            return torch.tensor([i, -1 if info is None else info.id, -1 if info is None else info.num_workers])
    out = {}
    dl = D.DataLoader(DS(), batch_size=3, num_workers=2, persistent_workers=True, worker_init_fn=wif)
    for ep in range(2):
        out[f"ep{ep}"] = [b for b in dl]
    out["len"] = len(dl)
    dl2 = D.DataLoader(DS(), batch_size=4, num_workers=3, prefetch_factor=1, drop_last=True)
    out["pf1"] = [b for b in dl2]
    def crash(i):
        raise ValueError("bad item %d" % i)
    class Bad(D.Dataset):
        def __len__(self): return 4
        def __getitem__(self, i):
            if i == 2: raise KeyError("nope")
            return i
    out["err_main"] = cap(lambda: list(D.DataLoader(Bad(), batch_size=1)))
    r = cap(lambda: list(D.DataLoader(Bad(), batch_size=1, num_workers=1)))
    out["err_worker"] = (r[0], r[1], r[2].split("\n")[0])
    return out


def prog_samplers(torch):
    D = torch.utils.data
    out = {}
    g = torch.Generator().manual_seed(1)
    ws = D.WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], num_samples=5, replacement=True, generator=g)
    out["wrs"] = list(ws); out["wrs_len"] = len(ws)
    out["wrs_type"] = type(list(ws)[0]).__name__
    out["wrs_norep"] = sorted(D.WeightedRandomSampler([1, 1, 1], 3, replacement=False))
    out["wrs_norep_err"] = cap(lambda: list(D.WeightedRandomSampler([1, 1, 1], 4, replacement=False)))
    out["wrs_err_ns"] = cap(lambda: D.WeightedRandomSampler([1, 1], num_samples=0))
    out["wrs_err_w"] = cap(lambda: D.WeightedRandomSampler([[1, 1]], num_samples=2))
    out["wrs_err_rep"] = cap(lambda: D.WeightedRandomSampler([1, 1], 2, replacement=1))
    srs = D.SubsetRandomSampler([5, 7, 9])
    out["srs"] = sorted(srs); out["srs_len"] = len(srs)
    out["srs_types"] = sorted(type(i).__name__ for i in srs)
    bs = D.BatchSampler(D.SequentialSampler(range(10)), batch_size=3, drop_last=False)
    out["bs"] = list(bs); out["bs_len"] = len(bs)
    out["bs_drop"] = list(D.BatchSampler(range(10), 3, True))
    out["bs_err"] = cap(lambda: D.BatchSampler(range(10), 0, False))
    out["bs_err2"] = cap(lambda: D.BatchSampler(range(10), 2, 1))
    out["rs_len"] = len(D.RandomSampler(range(10), num_samples=4))
    out["rs_rep"] = len(list(D.RandomSampler(range(3), replacement=True, num_samples=7)))
    out["rs_err"] = cap(lambda: len(D.RandomSampler(range(3), num_samples=4)))
    out["rs_err2"] = cap(lambda: D.RandomSampler(range(3), replacement=3))
    out["rs_err3"] = cap(lambda: D.RandomSampler(range(3), num_samples=-1))
    out["rs_sorted"] = sorted(D.RandomSampler(range(6)))
    out["rs_types"] = {type(i).__name__ for i in D.RandomSampler(range(6))}
    out["seq"] = list(D.SequentialSampler("abc"))
    class EveryOther(D.Sampler):
        def __init__(self, n): self.n = n
        def __iter__(self): return iter(range(0, self.n, 2))
        def __len__(self): return (self.n + 1) // 2
    dl = D.DataLoader(list(range(100, 110)), sampler=EveryOther(10), batch_size=2)
    out["custom"] = [b for b in dl]; out["custom_len"] = len(dl)
    dl = D.DataLoader(list(range(100, 110)), batch_sampler=[[0, 1], [5], [9, 8, 7]])
    out["batch_sampler_list"] = [b for b in dl]
    out["bsl_len"] = len(dl)
    dl = D.DataLoader(list(range(100, 110)), batch_size=4, sampler=D.SubsetRandomSampler(range(3)))
    out["subset_sorted"] = sorted(torch.cat(list(dl)).tolist())
    return out


def prog_split(torch):
    D = torch.utils.data
    out = {}
    ds = list(range(10))
    parts = D.random_split(ds, [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(42))
    out["lens"] = [len(p) for p in parts]
    out["types"] = [type(p).__name__ for p in parts]
    out["all"] = sorted(sum([list(p) for p in parts], []))
    out["idx_type"] = type(parts[0].indices).__name__
    out["idx_elt_type"] = type(parts[0].indices[0]).__name__
    parts = D.random_split(range(11), [0.33, 0.33, 0.34])
    out["lens_round"] = [len(p) for p in parts]
    out["lens_int"] = [len(p) for p in D.random_split(range(5), [2, 3])]
    out["err_sum"] = cap(lambda: D.random_split(range(5), [2, 2]))
    out["err_frac"] = cap(lambda: D.random_split(range(5), [0.5, 0.6]))
    out["err_neg"] = cap(lambda: D.random_split(range(5), [-0.5, 1.5]))
    torch.manual_seed(0)
    a = [list(p.indices) for p in D.random_split(range(8), [4, 4])]
    torch.manual_seed(0)
    b = [list(p.indices) for p in D.random_split(range(8), [4, 4])]
    out["reproducible"] = a == b
    cd = D.ConcatDataset([list(range(3)), list(range(10, 14))])
    out["cd"] = [cd[i] for i in range(len(cd))] + [cd[-1], cd[-7]]
    out["cd_cum"] = cd.cumulative_sizes
    out["cd_err"] = cap(lambda: cd[-8])
    out["cd_err_iter"] = cap(lambda: D.ConcatDataset([make_iter(torch)(0, 2)]))
    out["cd_empty"] = cap(lambda: D.ConcatDataset([]))
    sub = D.Subset(list(range(100, 110)), [2, 4, 6])
    out["sub"] = [sub[0], sub[-1], len(sub), cap_type(lambda: sub[[0, 2]])]
    out["sub_items"] = sub.__getitems__([0, 1])
    td = D.TensorDataset(torch.arange(4), torch.arange(4) * 2)
    out["td"] = td[1:3]
    out["td_tensors"] = len(td.tensors)
    sd = D.StackDataset(td, list("abcd"))
    out["sd"] = [sd[1], len(sd)]
    sd2 = D.StackDataset(a=td, b=list("abcd"))
    out["sd2"] = sd2[2]
    out["sd_batch"] = [b for b in D.DataLoader(sd2, batch_size=2)]
    out["sd_err"] = cap(lambda: D.StackDataset(td, list("abc")))
    out["sd_err2"] = cap(lambda: D.StackDataset(td, b=list("abcd")))
    out["add"] = len(td + td)
    out["add_type"] = type(td + td).__name__
    return out


def prog_ckpt(torch):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model(torch.ones(2, 3)).sum(); loss.backward(); opt.step()
    sched = torch.optim.lr_scheduler.StepLR(opt, 2)
    ck = {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "epoch": 5,
          "loss": 0.25, "best": loss.detach(), "hist": [1.0, 2.0], "name": "run1", "tuple": (1, 2), "none": None,
          "od": collections.OrderedDict(a=1), "set": {1, 2}, "bytes": b"xx", "cplx": 1 + 2j, "dtype": torch.float16,
          "device": torch.device("cpu"), "size": torch.Size([2, 3])}
    out = {}
    buf = io.BytesIO(); torch.save(ck, buf)
    out["pos_after_save"] = buf.tell() > 0
    buf.seek(0)
    ld = torch.load(buf)
    out["keys"] = list(ld.keys())
    out["types"] = {k: type(v).__name__ for k, v in ld.items()}
    out["model_keys"] = list(ld["model"].keys())
    out["sd_type"] = type(ld["model"]).__name__
    out["opt_state_keys"] = list(ld["optimizer"]["state"][0].keys())
    out["opt_pg"] = ld["optimizer"]["param_groups"]
    out["step_type"] = type(ld["optimizer"]["state"][0]["step"]).__name__
    out["step"] = ld["optimizer"]["state"][0]["step"]
    out["sched"] = ld["scheduler"]
    out["misc"] = [ld["epoch"], ld["loss"], ld["hist"], ld["name"], ld["tuple"], ld["none"], dict(ld["od"]), sorted(ld["set"]), ld["bytes"], ld["cplx"], str(ld["dtype"]), str(ld["device"]), tuple(ld["size"]), type(ld["size"]).__name__]
    m2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    out["load_sd"] = str(m2.load_state_dict(ld["model"]))
    o2 = torch.optim.Adam(m2.parameters(), lr=1.0); o2.load_state_dict(ld["optimizer"])
    out["o2_lr"] = o2.param_groups[0]["lr"]
    # python objects: weights_only default
    buf = io.BytesIO(); torch.save({"cfg": Cfg(), "w": torch.ones(2)}, buf); buf.seek(0)
    r = cap(lambda: torch.load(buf))
    out["wo_err_type"] = r[1] if r[0] == "EXC" else r
    out["wo_err_msg_has"] = [s in r[2] for s in ("Weights only load failed", "weights_only=False", "Cfg", "add_safe_globals", "safe_globals")] if r[0] == "EXC" else None
    buf.seek(0)
    ld = torch.load(buf, weights_only=False)
    out["wo_false"] = (type(ld["cfg"]).__name__, ld["cfg"].lr, ld["w"])
    buf.seek(0)
    with torch.serialization.safe_globals([Cfg]):
        out["safe"] = torch.load(buf)["cfg"].lr
    # map_location variants
    for ml in ("cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s):
        buf = io.BytesIO(); torch.save(torch.arange(3), buf); buf.seek(0)
        out[f"ml_{type(ml).__name__}"] = torch.load(buf, map_location=ml)
    buf.seek(0)
    out["ml_bad"] = cap(lambda: torch.load(buf, map_location="cuda"))
    # file path
    d = tempfile.mkdtemp(); p = os.path.join(d, "ck.pt")
    torch.save(model.state_dict(), p)
    out["file_sd"] = list(torch.load(p, map_location="cpu", weights_only=True).keys())
    with open(p, "rb") as f:
        out["fileobj"] = list(torch.load(f).keys())
    out["pathlib"] = len(torch.load(pathlib.Path(p)))
    out["missing"] = cap_type(lambda: torch.load(os.path.join(d, "nope.pt")))
    # a damaged or empty file: ember raises RuntimeError on purpose (README, "differs on purpose")
    return out


def prog_views(torch):
    out = {}
    base = torch.arange(12.0)
    v = base.view(3, 4); s = base[2:6]; t = v.t()
    buf = io.BytesIO(); torch.save({"base": base, "v": v, "s": s, "t": t, "same": base}, buf); buf.seek(0)
    ld = torch.load(buf)
    out["same_obj"] = ld["base"] is ld["same"]
    ld["base"][3] = 100.0
    out["v_after"] = ld["v"]; out["s_after"] = ld["s"]; out["t_after"] = ld["t"]
    out["strides"] = [ld[k].stride() for k in ("base", "v", "s", "t")]
    out["offs"] = [ld[k].storage_offset() for k in ("base", "v", "s", "t")]
    out["contig"] = ld["t"].is_contiguous()
    # saving a small slice saves whole storage
    big = torch.zeros(1000)
    b1 = io.BytesIO(); torch.save(big[:2], b1)
    b2 = io.BytesIO(); torch.save(big[:2].clone(), b2)
    out["size_ratio_gt"] = len(b1.getvalue()) > len(b2.getvalue()) + 3000
    b1.seek(0); out["slice_loaded"] = torch.load(b1)
    # requires_grad / parameter
    p = torch.nn.Parameter(torch.ones(2))
    w = torch.ones(2, requires_grad=True)
    buf = io.BytesIO(); torch.save([p, w, w * 2], buf) if False else torch.save([p, w], buf); buf.seek(0)
    lp, lw = torch.load(buf)
    out["param"] = (type(lp).__name__, lp.requires_grad, lw.requires_grad, lw.is_leaf)
    nl = torch.ones(2, requires_grad=True) * 2
    buf = io.BytesIO()
    out["nonleaf"] = cap(lambda: torch.save(nl, buf))
    if out["nonleaf"][0] == "ok":
        buf.seek(0); x = torch.load(buf); out["nonleaf_ld"] = (x.requires_grad, x.grad_fn is None)
    # dtypes
    for dt in (torch.float16, torch.bfloat16, torch.int8, torch.bool, torch.complex64, torch.uint8, torch.int16):
        buf = io.BytesIO(); torch.save(torch.ones(3, dtype=dt), buf); buf.seek(0)
        out[f"dt_{str(dt).split('.')[1]}"] = str(torch.load(buf).dtype)
    # scalar tensors, empty tensors
    buf = io.BytesIO(); torch.save([torch.tensor(3.5), torch.empty(0, 3), torch.zeros(2, 0)], buf); buf.seek(0)
    out["edge"] = [tuple(t.shape) for t in torch.load(buf)]
    return out


class Cfg:
    def __init__(self):
        self.lr = 0.1


def prog_rng(torch):
    out = {}
    g = torch.manual_seed(123)
    out["ms_type"] = type(g).__name__
    out["initial"] = torch.initial_seed()
    st = torch.get_rng_state()
    out["state_meta"] = (str(st.dtype), st.dim(), type(st).__name__)
    a = torch.rand(3); torch.set_rng_state(st); b = torch.rand(3)
    out["replay"] = torch.equal(a, b)
    out["set_bad"] = cap_type(lambda: torch.set_rng_state([1, 2]))
    out["set_bad2"] = cap(lambda: torch.set_rng_state(torch.zeros(3)))[:2]
    s = torch.seed()
    out["seed_type"] = type(s).__name__
    out["seed_init"] = torch.initial_seed() == s
    out["ms_neg"] = cap(lambda: torch.manual_seed(-1).initial_seed())
    out["ms_big"] = cap(lambda: torch.manual_seed(2**64))
    out["ms_float"] = cap(lambda: torch.manual_seed(1.5).initial_seed())
    out["ms_tensor"] = cap(lambda: torch.manual_seed(torch.tensor(7)).initial_seed())
    gen = torch.Generator()
    out["gen_dev"] = str(gen.device)
    out["gen_seed"] = gen.manual_seed(5).initial_seed()
    out["gen_is_same"] = gen.manual_seed(5) is gen
    x1 = torch.randn(2, generator=gen); gen.manual_seed(5); x2 = torch.randn(2, generator=gen)
    out["gen_replay"] = torch.equal(x1, x2)
    gs = gen.get_state(); y1 = torch.rand(2, generator=gen); gen.set_state(gs); y2 = torch.rand(2, generator=gen)
    out["gen_state"] = torch.equal(y1, y2)
    out["default_gen"] = type(torch.default_generator).__name__
    out["dg_seed"] = (torch.manual_seed(9), torch.default_generator.initial_seed())[1]
    with torch.random.fork_rng():
        torch.rand(5)
    c1 = torch.rand(1); torch.manual_seed(9); c2 = torch.rand(1)
    out["fork_rng"] = torch.equal(c1, c2)
    out["det"] = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    out["det2"] = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True, warn_only=True)
    out["det3"] = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(False)
    out["det_mode"] = cap(lambda: torch.get_deterministic_debug_mode())
    out["cudnn"] = cap(lambda: (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark))
    torch.backends.cudnn.deterministic = True; torch.backends.cudnn.benchmark = False
    out["cuda_seed"] = cap(lambda: torch.cuda.manual_seed_all(0))
    out["cuda_seed1"] = cap(lambda: torch.cuda.manual_seed(0))
    out["rand_mod"] = cap(lambda: torch.random.manual_seed(3).initial_seed())
    out["rand_mod_state"] = cap(lambda: torch.random.get_rng_state().dtype)
    return out


def prog_misc(torch):
    out = {}
    out["cuda_avail"] = torch.cuda.is_available()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out["dev"] = (str(dev), repr(dev), dev.type, dev.index)
    out["mps"] = cap(lambda: torch.backends.mps.is_available())
    out["dev_count"] = torch.cuda.device_count()
    x = torch.ones(2).to(dev)
    out["x_dev"] = str(x.device)
    for s in ("cpu", "cuda", "cuda:1", "cpu:0"):
        d = cap(lambda: torch.device(s)); out["d_" + s] = (str(d[1]), d[1].type, d[1].index) if d[0] == "ok" else d
    out["d_int"] = cap(lambda: str(torch.device("cuda", 0)))
    out["d_hash"] = len({torch.device("cpu"), torch.device("cpu")})
    out["d_dev"] = str(torch.device(torch.device("cpu")))
    out["nthreads"] = type(torch.get_num_threads()).__name__
    torch.set_num_threads(1); out["nt1"] = torch.get_num_threads()
    out["nt_bad"] = cap(lambda: torch.set_num_threads(0))
    out["interop"] = cap(lambda: torch.get_num_interop_threads() > 0)
    out["version_type"] = isinstance(torch.__version__, str)
    out["ver_attr"] = cap(lambda: (type(torch.version.cuda).__name__, hasattr(torch.version, "__version__")))
    out["ver_git"] = cap(lambda: type(torch.version.git_version).__name__)
    out["cuda_ver"] = cap(lambda: torch.version.cuda)
    out["hip"] = cap(lambda: torch.version.hip)
    out["is_tensor"] = (torch.is_tensor(x), torch.is_tensor(1))
    out["numel"] = torch.numel(torch.ones(2, 3))
    out["cuda_amp"] = cap(lambda: torch.cuda.amp.GradScaler(enabled=False).is_enabled())
    out["cuda_empty"] = cap(lambda: torch.cuda.empty_cache())
    out["cuda_mem"] = cap(lambda: torch.cuda.memory_allocated())
    out["cuda_init"] = cap(lambda: torch.cuda.is_initialized())
    return out


def prog_assert_close(torch):
    T = torch.testing
    out = {}
    cases = {
        "eq": (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])),
        "close": (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7])),
        "far": (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0])),
        "far2d": (torch.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3) * 1.1),
        "int": (torch.tensor([1, 2]), torch.tensor([1, 3])),
        "dtype": (torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)),
        "shape": (torch.ones(2), torch.ones(3)),
        "shape2": (torch.ones(2, 1), torch.ones(2)),
        "nan": (torch.tensor([float("nan")]), torch.tensor([float("nan")])),
        "scalar": (torch.tensor(1.0), 1.0),
        "pyfloat": (1.0, 1.0 + 1e-3),
        "pyint": (1, 2),
        "list": ([torch.ones(1), torch.zeros(1)], [torch.ones(1), torch.ones(1)]),
        "dict": ({"a": torch.ones(1)}, {"a": torch.zeros(1)}),
        "dictkeys": ({"a": torch.ones(1)}, {"b": torch.ones(1)}),
        "len": ([1, 2], [1]),
        "type": (torch.ones(1), np.ones(1)),
        "bool": (torch.tensor([True, False]), torch.tensor([True, True])),
        "inf": (torch.tensor([float("inf")]), torch.tensor([float("inf")])),
        "inf2": (torch.tensor([float("inf")]), torch.tensor([-float("inf")])),
        "rg": (torch.ones(2, requires_grad=True), torch.ones(2)),
        "empty": (torch.ones(0), torch.ones(0)),
        "many": (torch.zeros(100), torch.linspace(0, 1, 100)),
        "f16": (torch.ones(3, dtype=torch.float16), torch.ones(3, dtype=torch.float16) + 0.01),
        "cplx": (torch.tensor([1 + 1j]), torch.tensor([1 + 2j])),
    }
    for k, (a, b) in cases.items():
        r = cap(lambda: T.assert_close(a, b))
        out[k] = r[:2] if k in ("scalar", "type") else r  # the messages name the Tensor class
    out["nan_eq"] = cap(lambda: T.assert_close(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True))
    out["no_dtype"] = cap(lambda: T.assert_close(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64), check_dtype=False))
    out["tol"] = cap(lambda: T.assert_close(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.2, atol=0))
    out["tol_only_one"] = cap(lambda: T.assert_close(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.2))
    out["msg"] = cap(lambda: T.assert_close(torch.tensor([1.0]), torch.tensor([2.0]), msg="custom"))
    out["msg_fn"] = cap(lambda: T.assert_close(torch.tensor([1.0]), torch.tensor([2.0]), msg=lambda m: "X" + m[:20]))
    out["stride"] = cap(lambda: T.assert_close(torch.ones(2, 3).t(), torch.ones(3, 2), check_stride=True))
    out["allclose_int_float"] = cap(lambda: T.assert_close(torch.tensor([1]), torch.tensor([1.0])))
    out["assert_allclose"] = hasattr(T, "assert_allclose")
    out["make_tensor"] = cap(lambda: (lambda t: (tuple(t.shape), str(t.dtype)))(T.make_tensor(2, 3, dtype=torch.float32, device="cpu")))
    out["make_tensor_range"] = cap(lambda: bool(((lambda t: (t >= -1) & (t <= 1))(T.make_tensor((50,), dtype=torch.float64, device="cpu", low=-1, high=1))).all()))
    out["make_tensor_int"] = cap(lambda: str(T.make_tensor((5,), dtype=torch.int64, device="cpu", low=0, high=3).dtype))
    out["make_tensor_rg"] = cap(lambda: T.make_tensor((5,), dtype=torch.float32, device="cpu", requires_grad=True).requires_grad)
    out["make_tensor_nodev"] = cap(lambda: T.make_tensor((5,), dtype=torch.float32))[:2]
    out["allclose"] = (torch.allclose(torch.ones(2), torch.ones(2) + 1e-9), torch.isclose(torch.ones(2), torch.ones(2) * 1.1).tolist())
    out["allclose_err"] = cap(lambda: torch.allclose(torch.ones(2), torch.ones(2, dtype=torch.float64)))
    return out


def prog_default_dtype(torch):
    out = {}
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        out["gd"] = str(torch.get_default_dtype())
        out["t"] = [str(x.dtype) for x in (torch.tensor([1.0]), torch.tensor([1]), torch.zeros(2), torch.arange(3.0), torch.arange(3), torch.rand(2), torch.linspace(0, 1, 3), torch.tensor(1.5), torch.ones(2) * 2.5, torch.tensor([1 + 1j]), torch.full((2,), 1.0), torch.randn(1), torch.empty(1))]
        out["lin"] = str(torch.nn.Linear(2, 2).weight.dtype)
        out["np"] = str(torch.from_numpy(np.ones(2, dtype=np.float32)).dtype)
        out["as_t"] = str(torch.as_tensor(np.ones(2, dtype=np.float32)).dtype)
        out["t_np"] = str(torch.tensor(np.ones(2, dtype=np.float32)).dtype)
        out["int_div"] = str((torch.tensor([1]) / 2).dtype)
        out["mul_float"] = str((torch.tensor([1]) * 2.5).dtype)
        out["float_m"] = str(torch.ones(2, dtype=torch.int32).float().dtype)
        out["mean_int"] = cap(lambda: torch.tensor([1, 2]).mean())[:2]
        out["ft"] = str(torch.FloatTensor([1]).dtype) if hasattr(torch, "FloatTensor") else None
        torch.set_default_dtype(torch.float16)
        out["f16"] = str(torch.tensor([1.0]).dtype)
        torch.set_default_dtype(torch.bfloat16)
        out["bf16"] = str(torch.tensor([1.0]).dtype)
        out["bad"] = cap(lambda: torch.set_default_dtype(torch.int64))
        out["bad2"] = cap_type(lambda: torch.set_default_dtype("float32"))
        out["bad3"] = cap_type(lambda: torch.set_default_dtype(np.float32))
    finally:
        torch.set_default_dtype(old)
    out["restored"] = str(torch.tensor([1.0]).dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated, and torch warns only once per process
        out["tensor_type"] = cap(lambda: torch.set_default_tensor_type(torch.DoubleTensor))
    out["after_stt"] = str(torch.tensor([1.0]).dtype)
    torch.set_default_dtype(torch.float32)
    return out


def prog_numpy_sharing(torch):
    out = {}
    a = np.arange(6, dtype=np.float32)
    t = torch.from_numpy(a); a[0] = 100
    out["fn_shared"] = t[0].item()
    t[1] = -1; out["fn_back"] = float(a[1])
    u = torch.as_tensor(a); a[2] = 42; out["as_shared"] = u[2].item()
    v = torch.as_tensor(a, dtype=torch.float64); a[3] = 7; out["as_copy"] = v[3].item()
    w = torch.tensor(a); a[4] = 9; out["tensor_copy"] = w[4].item()
    out["as_list"] = str(torch.as_tensor([1, 2]).dtype)
    x = torch.ones(2); out["as_same"] = torch.as_tensor(x) is x
    out["as_same_dt"] = torch.as_tensor(x, dtype=torch.float32) is x
    out["as_diff_dt"] = torch.as_tensor(x, dtype=torch.float64) is x
    out["from_np_nc"] = torch.from_numpy(np.arange(6).reshape(2, 3).T).stride()
    out["from_np_neg"] = cap(lambda: torch.from_numpy(np.arange(6)[::-1]))
    out["from_np_obj"] = cap_type(lambda: torch.from_numpy(np.array(["a"])))
    out["from_np_list"] = cap(lambda: torch.from_numpy([1, 2]))
    out["numpy_back"] = type(t.numpy()).__name__
    b = t.numpy(); b[5] = 55; out["numpy_shared"] = t[5].item()
    out["numpy_rg"] = cap(lambda: torch.ones(2, requires_grad=True).numpy())
    out["numpy_force"] = cap(lambda: torch.ones(2, requires_grad=True).numpy(force=True).tolist())
    out["np_array"] = np.asarray(torch.ones(2)).dtype.str
    out["np_scalar_mul"] = cap(lambda: type(np.float64(2.0) * torch.ones(2)).__name__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch's own __array_wrap__ under NumPy 2
        out["t_plus_np"] = cap(lambda: (lambda r: (type(r).__name__, str(r.dtype)))(torch.ones(2) + np.ones(2)))
    out["tensor_np_scalar"] = str(torch.tensor(np.float32(1.5)).dtype)
    out["tensor_np_list"] = cap(lambda: str(torch.tensor([np.float32(1), np.float32(2)]).dtype))
    out["tensor_of_tensors"] = cap(lambda: torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]))
    out["tensor_of_tensors_multi"] = cap(lambda: torch.tensor([torch.ones(2), torch.ones(2)]))[:2]
    out["item_types"] = [type(torch.tensor(1).item()).__name__, type(torch.tensor(1.0).item()).__name__, type(torch.tensor(True).item()).__name__]
    out["tolist"] = torch.tensor([[1, 2]]).tolist()
    return out


def make_winit(torch):
    def wif(wid):
        info = torch.utils.data.get_worker_info()
        s = torch.initial_seed()
        np.random.seed(s % 2**32)
        info.dataset.tag = "w%d" % wid
    return wif


def prog_worker_seeds(torch):
    D = torch.utils.data
    class DS(D.Dataset):
        tag = "main"
        def __len__(self): return 6
        def __getitem__(self, i):
            info = D.get_worker_info()
            return {"i": i, "tag": self.tag, "seed_ok": info.seed == torch.initial_seed(), "id": info.id,
                    "nw": info.num_workers, "ds_is_copy": info.dataset is not None, "r": torch.rand(1).item(),
                    "npr": float(np.random.rand())}
    out = {}
    g = torch.Generator(); g.manual_seed(7)
    dl = D.DataLoader(DS(), batch_size=2, num_workers=2, worker_init_fn=make_winit(torch), generator=g)
    b = list(dl)
    out["ids"] = [x["id"] for x in b]
    out["tags"] = [x["tag"] for x in b]
    out["seed_ok"] = [x["seed_ok"] for x in b]
    out["i"] = [x["i"] for x in b]
    g.manual_seed(7)
    b2 = list(D.DataLoader(DS(), batch_size=2, num_workers=2, worker_init_fn=make_winit(torch), generator=g))
    out["repro_torch"] = all(torch.equal(x["r"], y["r"]) for x, y in zip(b, b2))
    out["repro_np"] = all(torch.equal(x["npr"], y["npr"]) for x, y in zip(b, b2))
    out["diff_workers"] = b[0]["r"][0].item() != b[1]["r"][0].item()
    out["pin"] = cap(lambda: [x["i"].is_pinned() for x in D.DataLoader(DS(), batch_size=3, pin_memory=True)])
    out["pin_dev"] = cap(lambda: D.DataLoader(DS(), pin_memory=True, pin_memory_device="cpu").pin_memory_device)
    out["ctx"] = cap(lambda: len(list(D.DataLoader(list(range(4)), num_workers=1, multiprocessing_context="spawn"))))
    out["ctx_bad"] = cap(lambda: D.DataLoader(list(range(4)), num_workers=1, multiprocessing_context="bogus"))
    out["ctx_nw0"] = cap(lambda: D.DataLoader(list(range(4)), multiprocessing_context="spawn"))[:1]
    out["timeout_err"] = cap(lambda: D.DataLoader(list(range(4)), timeout=-1))
    out["wif_nw0"] = [x for x in D.DataLoader(list(range(3)), worker_init_fn=lambda w: 1 / 0)]
    # shuffle with generator determinism
    g1 = torch.Generator().manual_seed(3); g2 = torch.Generator().manual_seed(3)
    a = torch.cat(list(D.DataLoader(list(range(10)), batch_size=4, shuffle=True, generator=g1)))
    c = torch.cat(list(D.DataLoader(list(range(10)), batch_size=4, shuffle=True, generator=g2)))
    out["shuffle_gen"] = torch.equal(a, c)
    dl = D.DataLoader(list(range(10)), batch_size=4, shuffle=True)
    torch.manual_seed(5); e1 = torch.cat(list(dl)); torch.manual_seed(5); e2 = torch.cat(list(dl))
    out["shuffle_manual_seed"] = torch.equal(e1, e2)
    e3 = torch.cat(list(dl))
    out["epochs_differ"] = not torch.equal(e2, e3)
    return out


def prog_iterable_len(torch):
    D = torch.utils.data
    class It(D.IterableDataset):
        def __init__(self, n, ln): self.n, self.ln = n, ln
        def __iter__(self): return iter(range(self.n))
        def __len__(self): return self.ln
    out = {}
    dl = D.DataLoader(It(5, 3), batch_size=2)
    out["len"] = len(dl)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out["items"] = list(dl)
        out["warn"] = [str(x.message)[:150] for x in w]
    dl = D.DataLoader(It(5, 5), batch_size=2, drop_last=True)
    out["len_drop"] = len(dl)
    out["items_drop"] = list(dl)
    # IterableDataset that yields tuples + num_workers without splitting duplicates data
    out["dup"] = sorted(torch.cat(list(D.DataLoader(It(4, 4), batch_size=2, num_workers=2))).tolist())
    # generator-based iterable dataset
    class Gen(D.IterableDataset):
        def __iter__(self):
            for i in range(3):
                yield {"x": torch.tensor([i, i]), "y": i}
    out["gen"] = list(D.DataLoader(Gen(), batch_size=2))
    out["gen_bn"] = list(D.DataLoader(Gen(), batch_size=None))[:1]
    return out


def prog_collate_custom(torch):
    D = torch.utils.data
    out = {}
    def pad_collate(batch):
        xs, ys = zip(*batch)
        lens = torch.tensor([len(x) for x in xs])
        padded = torch.nn.utils.rnn.pad_sequence(list(xs), batch_first=True, padding_value=-1)
        return padded, lens, torch.tensor(ys)
    data = [(torch.arange(n), n % 2) for n in (3, 1, 4, 2)]
    out["pad"] = list(D.DataLoader(data, batch_size=2, collate_fn=pad_collate))
    out["default_collate_direct"] = D.default_collate([{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}])
    out["convert"] = D.default_convert({"a": np.ones(2), "b": [np.int64(3)], "c": "s"})
    out["dc_dataclass"] = cap(lambda: D.default_collate([slice(1), slice(2)]))
    out["dc_set"] = cap(lambda: D.default_collate([{1}, {2}]))
    out["dc_ragged_list"] = cap(lambda: D.default_collate([[1, 2], [3]]))
    out["dc_empty"] = cap(lambda: D.default_collate([]))
    out["dc_np_obj"] = cap(lambda: D.default_collate([np.array([1, "a"], dtype=object)] * 2))
    out["dc_mixed_num"] = cap(lambda: D.default_collate([1, 2.5]))
    out["dc_mixed_t"] = cap(lambda: D.default_collate([torch.ones(1, dtype=torch.int64), torch.ones(1)]))
    out["dc_list_of_tensors_diff_shape"] = cap(lambda: D.default_collate([[torch.ones(2)], [torch.ones(3)]]))
    out["dc_tuple_strs"] = D.default_collate([("a", 1), ("b", 2)])
    out["dc_nested_dict"] = D.default_collate([{"m": {"k": torch.ones(2)}}, {"m": {"k": torch.zeros(2)}}])
    out["dc_dict_missing"] = cap(lambda: D.default_collate([{"a": 1}, {"b": 2}]))
    out["rg"] = (lambda b: (b.requires_grad, b.is_leaf))(D.default_collate([torch.ones(2, requires_grad=True)] * 2))
    out["collate_module"] = cap(lambda: type(D._utils.collate.collate).__name__)
    return out


def prog_checkpoint(torch):
    cp = torch.utils.checkpoint
    out = {}
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4, requires_grad=True)
    for ur in (True, False):
        lin.zero_grad(); x.grad = None
        def block(a, scale):
            return torch.relu(lin(a)) * scale
        y = cp.checkpoint(block, x, 2.0, use_reentrant=ur)
        out[f"gf_{ur}"] = type(y.grad_fn).__name__
        out[f"rg_{ur}"] = y.requires_grad
        y.sum().backward()
        out[f"xg_{ur}"] = x.grad.clone(); out[f"wg_{ur}"] = lin.weight.grad.clone()
    # reference without checkpoint
    lin.zero_grad(); x.grad = None
    (torch.relu(lin(x)) * 2.0).sum().backward()
    for ur in (True, False):
        out[f"same_{ur}"] = (torch.allclose(out.pop(f"xg_{ur}"), x.grad), torch.allclose(out.pop(f"wg_{ur}"), lin.weight.grad))
    # dropout determinism with preserve_rng_state
    drop = torch.nn.Dropout(0.5)
    x.grad = None
    torch.manual_seed(1)
    y = cp.checkpoint(lambda a: drop(a) * 3, x, use_reentrant=True)
    y.sum().backward()
    out["drop_consistent"] = torch.equal((y != 0), (x.grad != 0))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = cp.checkpoint(lambda a: a * 2, x)
        cp.checkpoint(lambda a: a * 2, x.detach(), use_reentrant=True)
        out["warns"] = [str(m.message)[:60] for m in w]
    out["kw_err"] = cap(lambda: cp.checkpoint(lambda a, b=1: a * b, x, use_reentrant=True, b=2))
    out["kw_ok"] = cap(lambda: cp.checkpoint(lambda a, b=1: a * b, x, use_reentrant=False, b=2).shape)
    out["ctx_err"] = cap(lambda: cp.checkpoint(lambda a: a, x, use_reentrant=True, debug=True))
    seq = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(5)])
    x.grad = None
    y = cp.checkpoint_sequential(seq, 2, x, use_reentrant=True)
    y.sum().backward()
    g1 = x.grad.clone(); x.grad = None; y2 = seq(x); y2.sum().backward()
    out["seq_same"] = (torch.allclose(y, y2), torch.allclose(g1, x.grad))
    out["seq_gf"] = type(y.grad_fn).__name__
    out["multi_out"] = cap(lambda: [t.grad_fn is not None for t in cp.checkpoint(lambda a: (a * 2, a + 1), x, use_reentrant=True)])
    return out


def prog_device_agnostic(torch):
    out = {}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.backends.cudnn.benchmark = True
        model = torch.nn.Linear(3, 2).to(device)
        scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
        x = torch.ones(4, 3).to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=True):
            y = model(x)
        out["y_dtype"] = y.dtype
        loss = y.float().sum()
        scaler.scale(loss).backward()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler.step(opt); scaler.update()
        out["scale"] = scaler.get_scale()
        out["param_dev"] = str(next(model.parameters()).device)
        out["cuda_amp_autocast"] = isinstance(torch.cuda.amp.autocast(enabled=False), torch.amp.autocast)
        out["autocast_cuda_on_cpu"] = cap_type(lambda: torch.autocast("cuda").__enter__())
        out["mem"] = cap(lambda: torch.cuda.max_memory_allocated())
        out["is_cuda"] = x.is_cuda
        out["get_device"] = x.get_device()
        out["dev_of_module"] = cap_type(lambda: model.device)
        out["warn"] = sorted({str(m.message)[:20] for m in w})  # ember's CUDA warning does not name torch_xla
    return out


def prog_mistakes(torch):
    D = torch.utils.data
    out = {}
    class NoLen(D.Dataset):
        def __getitem__(self, i): return i
    out["nolen"] = cap(lambda: len(D.DataLoader(NoLen())))
    out["nolen_iter"] = cap(lambda: next(iter(D.DataLoader(NoLen()))))
    class Nones(D.Dataset):
        def __len__(self): return 2
        def __getitem__(self, i): return None
    out["none_items"] = cap(lambda: next(iter(D.DataLoader(Nones(), batch_size=2))))
    out["none_items_bn"] = cap(lambda: next(iter(D.DataLoader(Nones(), batch_size=None))))
    out["tensor_ds"] = list(D.DataLoader(torch.arange(10), batch_size=4))
    out["tensor2d_ds"] = list(D.DataLoader(torch.arange(6).view(3, 2), batch_size=2))
    x = torch.arange(20.0).view(10, 2); y = torch.arange(10)
    ds = D.TensorDataset(x, y)
    tr, va = D.random_split(ds, [8, 2], generator=torch.Generator().manual_seed(0))
    out["sub_types"] = (type(tr.dataset).__name__, len(tr), len(va))
    out["sub_tensors"] = len(tr.dataset.tensors)
    subsub = D.Subset(tr, [0, 1])
    out["subsub"] = len(subsub)
    xb, yb = next(iter(D.DataLoader(subsub, batch_size=2)))
    out["subsub_shapes"] = (tuple(xb.shape), tuple(yb.shape))
    out["enumerate"] = [(i, xb.shape[0]) for i, (xb, yb) in enumerate(D.DataLoader(ds, batch_size=4))]
    labels = torch.tensor([0, 0, 0, 1])
    counts = torch.bincount(labels)
    w = 1.0 / counts[labels].double()
    s = D.WeightedRandomSampler(w, num_samples=len(w), replacement=True)
    out["wrs_len"] = len(s)
    out["wrs_weights"] = s.weights
    out["wrs_bad"] = cap(lambda: len(D.WeightedRandomSampler(torch.tensor([1.0, -1.0]), 2)))
    out["rs_repl"] = len(list(D.DataLoader(ds, sampler=D.RandomSampler(ds, replacement=True, num_samples=20), batch_size=5)))
    class Batched(D.Dataset):
        def __len__(self): return 10
        def __getitem__(self, idx): return torch.tensor(idx) * 10
    dl = D.DataLoader(Batched(), sampler=D.BatchSampler(D.SequentialSampler(range(10)), 4, False), batch_size=None)
    out["batched"] = list(dl)
    class GetItems(D.Dataset):
        def __len__(self): return 5
        def __getitem__(self, i): raise AssertionError("not used")
        def __getitems__(self, idxs): return [i * 2 for i in idxs]
    out["getitems"] = list(D.DataLoader(GetItems(), batch_size=2))
    out["idx_tensor"] = cap(lambda: ds[torch.tensor(1)])
    out["ds_neg"] = cap(lambda: ds[-1])
    out["ds_oob"] = cap_type(lambda: ds[10])
    out["iter_twice"] = [len(list(D.DataLoader(ds, batch_size=3))) for _ in range(2)]
    dl = D.DataLoader(ds, batch_size=3)
    it = iter(dl)
    out["it_next_exhaust"] = cap_type(lambda: [next(it) for _ in range(5)])
    out["dataset_attr"] = len(dl.dataset)
    out["set_after"] = cap(lambda: setattr(dl, "batch_size", 5))
    out["set_after2"] = cap(lambda: setattr(dl, "dataset", ds))
    return out


def prog_np_ckpt(torch):
    out = {}
    items = {"np_f64": np.float64(1.5), "np_arr": np.arange(3), "np_state": np.random.get_state(), "py_state": random.getstate(),
             "torch_state": torch.get_rng_state(), "np_i": np.int64(3), "np_dtype": np.dtype("float32"), "np_bool": np.bool_(True)}
    for k, v in items.items():
        b = io.BytesIO(); torch.save(v, b); b.seek(0)
        try:
            out[k] = ("ok", type(torch.load(b)).__name__)
        except Exception as e:  # noqa: BLE001 - the refusal is the result compared
            out[k] = ("EXC", type(e).__name__, str(e).split("Unsupported global:")[-1][:160].replace("ember", "torch"))
        b.seek(0)
        r = cap(lambda: torch.load(b, weights_only=False))
        out[k + "_wf"] = (r[0], type(r[1]).__name__)
    return out


def prog_whole(torch):
    out = {}
    m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    b = io.BytesIO(); torch.save(m, b); b.seek(0)
    try:
        torch.load(b)
    except Exception as e:  # noqa: BLE001 - the refusal is the result compared
        out["wo"] = (type(e).__name__, str(e).split("Unsupported global:")[-1][:120].replace("ember", "torch"))
    b.seek(0)
    m2 = torch.load(b, weights_only=False)
    out["m2"] = (type(m2).__name__, repr(m2), m2[0].weight.shape, m2.training)
    out["eq"] = torch.equal(m2[0].weight, m[0].weight)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(torch.ones(1, 2)).sum().backward(); opt.step()
    b = io.BytesIO(); torch.save(opt, b); b.seek(0)
    o2 = torch.load(b, weights_only=False)
    out["o2"] = (type(o2).__name__, o2.param_groups[0]["lr"], len(o2.state))
    x = torch.ones(2, requires_grad=True)
    x.register_hook(lambda g: g)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        b = io.BytesIO(); torch.save(x, b)
        out["hook_warn"] = [str(m.message)[:40] for m in w]
    b.seek(0)
    out["hook_ld"] = torch.load(b).requires_grad
    y = torch.ones(3)
    b = io.BytesIO(); torch.save({"a": y, "b": y[1:]}, b); b.seek(0)
    d = torch.load(b, mmap=False)
    out["view_off"] = d["b"].storage_offset()
    return out


@dataclasses.dataclass
class DC:
    a: int


class MyMap(collections.abc.Mapping):
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


class MySeq(list):
    pass


def prog_dist_sampler(torch):
    D = torch.utils.data
    out = {}
    ds = list(range(10))
    out["noinit"] = cap(lambda: D.DistributedSampler(ds))
    out["badrank"] = cap(lambda: D.DistributedSampler(ds, num_replicas=2, rank=2))
    s0 = D.DistributedSampler(ds, num_replicas=3, rank=0, shuffle=False)
    s1 = D.DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False, drop_last=True)
    out["s0"] = list(s0); out["s1"] = list(s1); out["lens"] = (len(s0), len(s1), s0.num_samples, s0.total_size)
    s = D.DistributedSampler(ds, num_replicas=2, rank=0, shuffle=True, seed=3)
    s.set_epoch(1); a = list(s); s.set_epoch(1); b = list(s); s.set_epoch(2); c = list(s)
    out["epoch"] = (a == b, a != c, sorted(a + list(D.DistributedSampler(ds, num_replicas=2, rank=1, seed=3))) != None)
    dl = D.DataLoader(ds, sampler=s, batch_size=2)
    out["dl_len"] = len(dl)
    out["is_avail"] = torch.distributed.is_available()
    out["is_init"] = torch.distributed.is_initialized()
    out["ws"] = cap(lambda: torch.distributed.get_world_size())
    out["rank"] = cap(lambda: torch.distributed.get_rank())
    return out


def prog_collate_types(torch):
    D = torch.utils.data
    dc = D.default_collate
    out = {}
    out["defaultdict"] = cap(lambda: (lambda r: (type(r).__name__, r))(dc([collections.defaultdict(int, a=1), collections.defaultdict(int, a=2)])))
    out["userdict"] = cap(lambda: (lambda r: type(r).__name__)(dc([collections.UserDict(a=1), collections.UserDict(a=2)])))
    out["mymap"] = cap(lambda: (lambda r: (type(r).__name__, dict(r)))(dc([MyMap({"a": 1}), MyMap({"a": 2})])))
    out["myseq"] = cap(lambda: (lambda r: (type(r).__name__, r))(dc([MySeq([1, 2]), MySeq([3, 4])])))
    out["dataclass"] = cap_type(lambda: dc([DC(1), DC(2)]))
    out["od"] = cap(lambda: (lambda r: (type(r).__name__, list(r.keys())))(dc([collections.OrderedDict(b=1, a=2)] * 2)))
    out["deque"] = cap(lambda: (lambda r: (type(r).__name__, list(r)))(dc([collections.deque([1, 2]), collections.deque([3, 4])])))
    out["range"] = cap(lambda: (lambda r: (type(r).__name__, r))(dc([range(2), range(2)])))
    out["np_memmap_like"] = cap(lambda: dc([np.ones((2,), dtype=np.float32).view(np.ndarray)] * 2))
    out["np_obj_scalar"] = cap_type(lambda: dc([np.str_("a"), np.str_("b")]))
    out["np_dt64"] = cap_type(lambda: dc([np.datetime64("2020-01-01")] * 2))
    out["tensor_list_nested"] = dc([[torch.ones(2), [torch.zeros(1)]], [torch.ones(2), [torch.zeros(1)]]])
    out["int_big"] = cap(lambda: dc([2**40, 1]))
    out["int_huge"] = cap_type(lambda: dc([2**70, 1]))
    out["float_int_mix"] = cap(lambda: dc([1.5, 2]))
    out["bool_int_mix"] = cap(lambda: dc([True, 2]))
    out["tensor_rg_mix"] = cap(lambda: dc([torch.ones(1), torch.ones(1, dtype=torch.float64)]))
    out["convert"] = D.default_convert([np.ones(2), (np.int32(1), "s"), {"k": np.zeros(1)}])
    out["convert_nt"] = D.default_convert(collections.namedtuple("P", "x y")(np.ones(1), 2))
    return out


def prog_toplevel(torch):
    """The device choice of torch's quickstart tutorial, constants, thread and determinism switches."""
    out = {}
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    out["device"] = device
    out["acc"] = (torch.accelerator.device_count(), torch.accelerator.current_accelerator())
    out["acc_err"] = cap(lambda: torch.accelerator.current_device_index())
    out["consts"] = (torch.pi, torch.e, torch.inf, torch.newaxis, math.isnan(torch.nan))
    out["angle"] = torch.tensor([2 * torch.pi]).sin().abs().item() < 1e-6
    out["typename"] = [torch.typename(torch.ones(1)), torch.typename(torch.ones(1, dtype=torch.int8)), torch.typename(3),
                       torch.typename(torch.nn.ReLU())]
    out["warn_always"] = torch.is_warn_always_enabled()
    out["interop_bad"] = cap(lambda: torch.set_num_interop_threads(0))
    out["threads_bad"] = [cap(lambda: torch.set_num_threads(v)) for v in (0, -2, 1.5, "2", True)]
    out["det"] = [cap(lambda: torch.use_deterministic_algorithms(v)) for v in (1, None)]
    torch.use_deterministic_algorithms(True, warn_only=True)
    out["det_mode"] = (torch.get_deterministic_debug_mode(), torch.are_deterministic_algorithms_enabled())
    torch.set_deterministic_debug_mode("default")
    out["det_mode2"] = (torch.get_deterministic_debug_mode(), torch.are_deterministic_algorithms_enabled())
    out["det_bad"] = [cap(lambda: torch.set_deterministic_debug_mode(v)) for v in ("x", 7)]
    out["hasattr_fft_ok"] = isinstance(hasattr(torch, "fft"), bool)
    out["legacy_names"] = [torch.FloatTensor.__name__, torch.LongTensor.__name__, torch.BoolTensor.__name__]
    out["version_mod"] = (torch.version.cuda, torch.version.hip)
    return out


PROGRAMS = [prog_collate, prog_loader_misc, prog_iterable, prog_workers, prog_samplers, prog_split, prog_ckpt,
            prog_views, prog_rng, prog_misc, prog_assert_close, prog_default_dtype, prog_numpy_sharing,
            prog_worker_seeds, prog_iterable_len, prog_collate_custom, prog_checkpoint, prog_device_agnostic,
            prog_mistakes, prog_np_ckpt, prog_whole, prog_dist_sampler, prog_collate_types,
            prog_toplevel]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program(program):
    compare(program)


MP_PROGRAM = """
import sys, importlib
lib = importlib.import_module(sys.argv[1])
torch = lib
mp = torch.multiprocessing

def worker(rank, q, t, ev=None):
    t[rank] = rank + 10
    q.put((rank, torch.full((2,), float(rank))))
    if ev is not None:
        ev.wait(30)

def bad(rank):
    if rank == 1:
        raise ValueError("boom in rank 1")

def square(x):
    return x * x

if __name__ == "__main__":
    out = {}
    out["methods"] = sorted(mp.get_all_start_methods())
    out["cur"] = mp.get_start_method(allow_none=True)
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    t = torch.zeros(3).share_memory_()
    out["shared"] = t.is_shared()
    ev = ctx.Event()
    pc0 = mp.spawn(worker, args=(q, t, ev), nprocs=2, join=False)
    got = sorted([q.get() for _ in range(2)], key=lambda r: r[0])
    out["got"] = [(r, v.tolist()) for r, v in got]
    ev.set(); pc0.join()
    out["t"] = t.tolist()
    try:
        mp.spawn(bad, nprocs=2)
    except Exception as e:
        out["err"] = (type(e).__name__, str(e).splitlines()[0], "ValueError: boom in rank 1" in str(e))
    out["pc"] = type(pc0).__name__
    with mp.Pool(2) as pool:
        out["pool"] = pool.map(square, [1, 2, 3])
        out["pool_t"] = [x.tolist() for x in pool.map(square, [torch.ones(2) * 2])]
    out["cpu_count"] = mp.cpu_count() > 0
    out["strategy"] = (mp.get_sharing_strategy(), sorted(mp.get_all_sharing_strategies()))
    out["proc_cls"] = hasattr(mp, "Process") and hasattr(mp, "Queue") and hasattr(mp, "Event")
    print(repr(out))
"""


def test_multiprocessing_program(tmp_path):
    # spawn, shared tensors, queues, Pool and a failing rank, in a fresh interpreter per library
    import subprocess
    import sys
    path = tmp_path / "mp_prog.py"
    path.write_text(MP_PROGRAM)
    outs = {}
    for name in ("ember", "torch"):
        r = subprocess.run([sys.executable, str(path), name], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        outs[name] = r.stdout.strip()
    assert outs["ember"] == outs["torch"]


def test_dlpack_capsules_cross_both_ways():
    t = torch.arange(6.0).view(2, 3).t()
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    e[1, 0] = 7.0
    assert t[1, 0].item() == 7.0 and e.stride() == t.stride()
    b = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(3, dtype=torch.bfloat16)))
    assert b.dtype is ember.bfloat16 and b.tolist() == [1.0, 1.0, 1.0]
    x = ember.arange(3.0)
    back = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(x))
    back[0] = 5.0
    assert x.tolist() == [5.0, 1.0, 2.0]


def test_training_checkpoint_moves_between_libraries():
    # train in torch, resume in ember from torch's checkpoint, then resume in torch from ember's: same losses
    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 1))
        o = lib.optim.AdamW(m.parameters(), lr=0.01)
        return m, o, lib.optim.lr_scheduler.CosineAnnealingLR(o, 10)

    def train(m, o, s, x, y, steps):
        for _ in range(steps):
            o.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            o.step()
            s.step()
        return loss.item()
    xn = np.random.RandomState(0).randn(8, 3).astype("float32")
    yn = xn.sum(1, keepdims=True)
    tx, ty, ex, ey = torch.from_numpy(xn), torch.from_numpy(yn), ember.from_numpy(xn), ember.from_numpy(yn)
    tm, to, ts = build(torch)
    train(tm, to, ts, tx, ty, 3)
    buf = io.BytesIO()
    torch.save({"model": tm.state_dict(), "opt": to.state_dict(), "sched": ts.state_dict(), "epoch": 3}, buf)
    buf.seek(0)
    ck = ember.load(buf)
    em, eo, es = build(ember)
    assert str(em.load_state_dict(ck["model"])) == "<All keys matched successfully>"
    eo.load_state_dict(ck["opt"])
    es.load_state_dict(ck["sched"])
    assert ck["epoch"] == 3 and ck["model"]._metadata == tm.state_dict()._metadata
    lt, le = train(tm, to, ts, tx, ty, 3), train(em, eo, es, ex, ey, 3)
    assert abs(lt - le) < 1e-5 * max(1.0, abs(lt))
    buf = io.BytesIO()
    ember.save({"model": em.state_dict(), "opt": eo.state_dict(), "sched": es.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf)
    tm.load_state_dict(ck["model"])
    to.load_state_dict(ck["opt"])
    ts.load_state_dict(ck["sched"])
    assert ts.state_dict() == es.state_dict() and ck["opt"]["state"][0]["step"].item() == 6.0
    assert abs(train(tm, to, ts, tx, ty, 2) - train(em, eo, es, ex, ey, 2)) < 1e-4
