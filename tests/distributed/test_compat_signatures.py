"""ember.distributed's functions take torch.distributed's arguments, by the same names, in the same order."""
import inspect

import pytest

import ember.distributed as dist
from ember.nn.parallel import DistributedDataParallel

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")

NAMES = ["init_process_group", "destroy_process_group", "barrier", "new_group", "all_reduce", "reduce", "broadcast",
         "all_gather", "all_gather_into_tensor", "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor",
         "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv", "broadcast_object_list",
         "all_gather_object", "gather_object", "scatter_object_list", "get_rank", "get_world_size", "is_initialized",
         "is_available", "get_backend", "batch_isend_irecv", "monitored_barrier", "get_process_group_ranks",
         "get_global_rank", "get_group_rank"]


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", NAMES)
def test_signature(name):
    mine = [n for n, _ in _params(getattr(dist, name))]
    theirs = [n for n, _ in _params(getattr(tdist, name))]
    if name == "init_process_group":
        theirs = [n for n in theirs if not n.startswith("_")]
    assert mine == theirs


def test_reduce_ops_and_defaults():
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"):
        assert getattr(dist.ReduceOp, op).name == op
        assert getattr(dist.ReduceOp, op).value == getattr(tdist.ReduceOp, op).value
    assert dict(_params(dist.new_group))["sort_ranks"] is True


def test_ddp_signature():
    mine = _params(DistributedDataParallel.__init__)
    theirs = _params(torch.nn.parallel.DistributedDataParallel.__init__)
    assert [n for n, _ in mine] == [n for n, _ in theirs]
    # the defaults match, except broadcast_buffers: torch 2.13 spells its default True as None
    diff = [n for (n, a), (_, b) in zip(mine, theirs) if a != b]
    assert diff == ["broadcast_buffers"]


def test_not_initialized_message_matches():
    with pytest.raises(ValueError) as mine:
        dist.get_rank()
    with pytest.raises(ValueError) as theirs:
        tdist.get_rank()
    assert str(mine.value) == str(theirs.value)
