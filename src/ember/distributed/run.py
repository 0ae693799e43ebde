"""`python -m ember.distributed.run`: a torchrun-style launcher on top of the MPI launcher (mpiexec).

    python -m ember.distributed.run --nproc-per-node 2 train.py --lr 0.1
    python -m ember.distributed.run --nproc-per-node 4 --hosts node1,node2 train.py      # 8 processes
    python -m ember.distributed.run --nproc-per-node 4 --hostfile hosts.txt train.py

It runs one `mpiexec` (the hydra launcher of the mpich wheel by default, see --mpiexec) that starts
nproc-per-node processes on each host. Each process sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR and MASTER_PORT from MPI's placement, then runs the script as __main__. A rank that ends
with an uncaught exception prints its traceback and aborts the MPI job, so the others never wait for it.
Multi-node runs go through the MPI launcher's host list (it reaches the other machines with ssh), so the launcher
is started once, on one machine; --node-rank is therefore only accepted as 0.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys

__all__ = ["main", "parse_args"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start a distributed ember program with the MPI launcher.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="processes per host: an integer, or 'auto'/'cpu' (one per CPU core)")
    p.add_argument("--nnodes", default=None, help="number of hosts (default: the number of --hosts, else 1)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, help="only 0: the launcher runs once")
    p.add_argument("--hosts", "--host", default=None, help="comma-separated host names, passed to mpiexec")
    p.add_argument("--hostfile", default=None, help="an MPI host file, passed to mpiexec")
    p.add_argument("--master-addr", "--master_addr", default=None,
                   help="MASTER_ADDR for the processes (default: the first host, else 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun compatibility")
    p.add_argument("--mpiexec", default=None, help="the MPI launcher to run (default: mpiexec on PATH)")
    p.add_argument("--mpi-args", default="", help="extra arguments for the MPI launcher, as one string")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script argument as an executable, not with this Python")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(argv=None):
    return _parser().parse_args(argv)


def _nproc(value):
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"--nproc-per-node must be an integer, 'auto' or 'cpu', got {value!r}") from None
    if n < 1:
        raise SystemExit("--nproc-per-node must be at least 1")
    return n


def find_mpiexec():
    """The MPI launcher: the one installed next to this Python (the `mpich` wheel puts it in the environment's bin,
    which need not be on PATH), else the first on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec") or shutil.which("mpirun")


def launch_command(args):
    """The mpiexec command line that starts every process."""
    if args.node_rank != 0:
        raise SystemExit("ember.distributed.run starts every node's processes through the MPI launcher: run it "
                         "once, on one machine, with --hosts or --hostfile (not once per node with --node-rank)")
    nproc = _nproc(args.nproc_per_node)
    hosts = [h for h in (args.hosts or "").split(",") if h]
    nnodes = int(args.nnodes) if args.nnodes is not None else max(1, len(hosts))
    if hosts and len(hosts) < nnodes:
        raise SystemExit(f"--nnodes {nnodes} but only {len(hosts)} host(s) in --hosts")
    if nnodes > 1 and not hosts and not args.hostfile:
        raise SystemExit("--nnodes > 1 needs --hosts or --hostfile to tell the MPI launcher where to start them")
    world = nproc * nnodes
    mpiexec = args.mpiexec or find_mpiexec()
    if mpiexec is None:
        raise SystemExit("no MPI launcher found: install one (`pip install mpich mpi4py`) or pass --mpiexec")
    addr = args.master_addr or (hosts[0] if hosts else "127.0.0.1")
    cmd = [mpiexec, "-n", str(world), "-ppn", str(nproc)]
    if hosts:
        cmd += ["-hosts", ",".join(hosts[:nnodes])]
    if args.hostfile:
        cmd += ["-f", args.hostfile]
    cmd += shlex.split(args.mpi_args)
    env = {"MASTER_ADDR": addr, "MASTER_PORT": str(args.master_port), "WORLD_SIZE": str(world),
           "LOCAL_WORLD_SIZE": str(nproc)}
    if world > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"  # as torchrun does: N processes x all cores' threads oversubscribe the CPU
    for k, v in env.items():
        cmd += ["-genv", k, v]
    worker = [sys.executable, "-m", "ember.distributed.run", "--worker"]
    if args.module:
        worker.append("-m")
    if args.no_python:
        worker.append("--no-python")
    cmd += worker + [args.script] + list(args.script_args)
    return cmd


def _set_rank_env():
    """RANK, LOCAL_RANK and GROUP_RANK of this process, from MPI."""
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    local = world.Split_type(MPI.COMM_TYPE_SHARED, key=world.Get_rank())
    rank, lrank, lsize = world.Get_rank(), local.Get_rank(), local.Get_size()
    local.Free()
    os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(lrank), "LOCAL_WORLD_SIZE": str(lsize),
                       "WORLD_SIZE": str(world.Get_size()), "GROUP_RANK": str(rank // max(lsize, 1)),
                       "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(world.Get_size())})
    return world


def _run_worker(args):
    world = _set_rank_env()
    if args.no_python:
        sys.stdout.flush()
        os.execvp(args.script, [args.script] + list(args.script_args))
    import runpy
    try:
        if args.module:
            sys.argv = [args.script] + list(args.script_args)
            runpy.run_module(args.script, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [args.script] + list(args.script_args)
            sys.path[0] = os.path.dirname(os.path.abspath(args.script))
            runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code not in (None, 0) and world.Get_size() > 1:
            from ._mpi import abort
            if not isinstance(code, int):
                sys.stderr.write(f"{code}\n")
            abort(f"[rank {world.Get_rank()}] exited with status {code}; aborting the MPI job.",
                  code if isinstance(code, int) else 1)
        raise
    except BaseException:  # noqa: BLE001 - any failure of the script must end the whole job
        import traceback
        traceback.print_exc()
        if world.Get_size() > 1:
            from ._mpi import abort
            abort(f"[rank {world.Get_rank()}] ember.distributed.run: the script raised; aborting the MPI job so "
                  f"that the other ranks do not wait for it.")
        raise SystemExit(1) from None


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        _run_worker(args)
        return 0
    cmd = launch_command(args)
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
