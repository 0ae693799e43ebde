"""ember.distributed and DistributedDataParallel, run in real MPI jobs (mpiexec, 2 and 3 processes).

Each job runs one worker script holding many checks; every launch has a timeout, so a regression fails instead of
hanging. Skipped when mpi4py or mpiexec is missing.
"""
import importlib.util
import os
import subprocess
import sys
import time

import pytest

import ember
import ember.distributed as dist
from ember.distributed import run as launcher

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = launcher.find_mpiexec()
needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or MPIEXEC is None,
                               reason="needs mpi4py and mpiexec")


def _env():
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    return env


def _mpiexec(n, script, *args, timeout=90):
    cmd = [MPIEXEC, "-n", str(n), sys.executable, os.path.join(HERE, script), *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=_env())
    return p, time.monotonic() - t0


def _ok(p, n):
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    for r in range(n):
        assert f"OK rank {r}" in p.stdout, out


# ----- in one process, without MPI -----

def test_not_initialized_errors():
    msg = "Default process group has not been initialized, please make sure to call init_process_group."
    assert not dist.is_initialized()
    for fn, args in ((dist.get_rank, ()), (dist.get_world_size, ()), (dist.all_reduce, (ember.ones(1),)),
                     (dist.barrier, ()), (dist.broadcast, (ember.ones(1), 0)), (dist.new_group, ([0],))):
        with pytest.raises(ValueError) as e:
            fn(*args)
        assert str(e.value) == msg
    with pytest.raises(ValueError, match="init_process_group"):
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="Expected parameter `tensor` of type torch.Tensor"):
        dist.all_reduce([1.0])


def test_names():
    assert dist.is_available() == (importlib.util.find_spec("mpi4py") is not None)
    assert dist.Backend("GLOO") == "gloo" and dist.Backend.NCCL == "nccl"
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.Backend("tpu")
    assert repr(dist.ReduceOp.SUM) == "<RedOpType.SUM: 0>"
    assert {dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX,
            dist.ReduceOp.AVG} <= set(dist.ReduceOp.RedOpType)
    assert dist.GroupMember.NON_GROUP_MEMBER == -100
    assert "parallel" in ember.nn.__all__


def test_launcher_command():
    a = launcher.parse_args(["--nproc-per-node", "4", "--hosts", "n1,n2", "--mpiexec", "mpiexec", "train.py",
                             "--lr", "0.1"])
    cmd = launcher.launch_command(a)
    assert cmd[:8] == ["mpiexec", "-n", "8", "-ppn", "4", "-hosts", "n1,n2", "-genv"]
    env = {cmd[i + 1]: cmd[i + 2] for i, c in enumerate(cmd) if c == "-genv"}
    assert env["MASTER_ADDR"] == "n1" and env["WORLD_SIZE"] == "8" and env["LOCAL_WORLD_SIZE"] == "4"
    assert cmd[-4:] == ["--worker", "train.py", "--lr", "0.1"]
    a = launcher.parse_args(["--nproc_per_node=2", "--hostfile", "hosts", "--nnodes", "3", "--mpiexec", "mpiexec",
                             "-m", "pkg.train"])
    cmd = launcher.launch_command(a)
    assert cmd[2] == "6" and "-f" in cmd and cmd[-3:] == ["--worker", "-m", "pkg.train"]
    with pytest.raises(SystemExit, match="--hosts or --hostfile"):
        launcher.launch_command(launcher.parse_args(["--nnodes", "2", "--mpiexec", "x", "t.py"]))
    with pytest.raises(SystemExit, match="once, on one machine"):
        launcher.launch_command(launcher.parse_args(["--node-rank", "1", "--mpiexec", "x", "t.py"]))


def test_nccl_without_cupy_is_a_clear_error():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed")
    from ember.distributed import nccl
    with pytest.raises(RuntimeError, match="needs CuPy"):
        nccl.NcclGroup(None)


# ----- MPI jobs -----

@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    p, _ = _mpiexec(n, "_collectives_worker.py")
    _ok(p, n)


@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_ddp(n):
    p, _ = _mpiexec(n, "_ddp_worker.py")
    _ok(p, n)


@needs_mpi
@pytest.mark.parametrize("mode", ["raise", "kill", "timeout"])
def test_failing_rank_ends_the_job(mode):
    p, secs = _mpiexec(2, "_failure_worker.py", mode, timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "UNREACHABLE" not in out
    assert secs < 30, out
    if mode == "raise":
        assert "ValueError: rank 1 fails on purpose" in out and "aborting the MPI job" in out
    if mode == "timeout":
        assert "all_reduce timed out after 2 seconds" in out


LAUNCHED = """
import os, sys
import ember, ember.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
assert os.environ["RANK"] == str(r) and os.environ["LOCAL_RANK"] == str(r), os.environ
assert os.environ["WORLD_SIZE"] == "2" and os.environ["LOCAL_WORLD_SIZE"] == "2"
assert os.environ["MASTER_ADDR"] == "127.0.0.1" and os.environ["MASTER_PORT"] == "29511"
assert sys.argv[1:] == ["--flag", "x"] and __name__ == "__main__"
t = ember.ones(1) * (r + 1)
dist.all_reduce(t)
assert t.item() == 3.0
if sys.argv[1:] and r == 1 and os.environ.get("FAIL"):
    sys.exit(3)
dist.barrier()
print(f"OK rank {r}", flush=True)
"""


@needs_mpi
def test_launcher(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(LAUNCHED)
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--master-port", "29511",
           str(script), "--flag", "x"]
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=90, env=_env())
    _ok(p, 2)
    t0 = time.monotonic()
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60, env=dict(_env(), FAIL="1"))
    assert p.returncode == 3, p.stdout + p.stderr
    assert time.monotonic() - t0 < 30
    assert "exited with status 3" in p.stderr


@needs_mpi
def test_env_must_agree_with_mpi():
    code = ("import ember.distributed as d\ntry:\n d.init_process_group('gloo')\nexcept RuntimeError as e:\n"
            " print('ERR', e)\n")
    p = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                       env=dict(_env(), WORLD_SIZE="2", RANK="0"))
    assert "ERR environment variable WORLD_SIZE=2 does not match MPI's view" in p.stdout, p.stdout + p.stderr
    assert "mpiexec -n N" in p.stdout
