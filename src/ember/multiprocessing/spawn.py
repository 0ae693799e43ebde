"""spawn / start_processes: run fn(i, *args) in nprocs processes and report the first failure in the parent."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "SpawnContext",
           "spawn", "start_processes"]


class ProcessException(Exception):
    """Same as `torch.multiprocessing.ProcessException`."""
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Same as `torch.multiprocessing.ProcessRaisedException`: the child raised; the message has its traceback."""


class ProcessExitedException(ProcessException):
    """Same as `torch.multiprocessing.ProcessExitedException`: the child died from a signal or a non-zero exit."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _set_pdeathsig():
    # Linux: the child gets SIGINT when the parent dies, so a crashed parent leaves no orphans behind
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: nothing to set
        pass


def _wrap(fn, i, args, error_conn):
    _set_pdeathsig()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent
    except Exception:  # noqa: BLE001 (any error of the user's function is reported to the parent)
        import traceback
        error_conn.send(traceback.format_exc())
        error_conn.close()
        sys.exit(1)


class ProcessContext:
    """Same as `torch.multiprocessing.ProcessContext`: the processes started by `start_processes`."""

    def __init__(self, processes, error_conns):
        self.processes = processes
        self.error_conns = error_conns
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}
        self._conns = {c: i for i, c in enumerate(error_conns)}  # still open: read as soon as a child writes
        self._traces = {}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        import time
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """True once every process exited cleanly, False if some still run after timeout; raises on a failure.

        On the first failure the other processes are stopped (SIGTERM after grace_period, then SIGKILL) and a
        ProcessRaisedException (with the child's traceback) or ProcessExitedException is raised.
        """
        if not self.sentinels:
            return True
        # the error pipes are waited on too: a child blocked writing a long traceback is read, not deadlocked
        ready = multiprocessing.connection.wait(list(self.sentinels) + list(self._conns), timeout=timeout)
        failed = None
        for obj in ready:
            if obj in self._conns:
                self._read_trace(obj)
        for obj in ready:
            i = self.sentinels.pop(obj, None)
            if i is None:
                continue
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                failed = i
                break
        if failed is None:
            failed = next((i for i in self._traces if self.processes[i].sentinel in self.sentinels), None)
            if failed is not None:
                self.processes[failed].join()
        if failed is None:
            if self.sentinels:
                return False
            self._close()
            return True
        self._stop_others(grace_period)
        raise self._error(failed)

    def _read_trace(self, conn):
        i = self._conns.pop(conn)
        try:
            self._traces[i] = conn.recv()
        except (EOFError, OSError):
            pass
        conn.close()

    def _close(self):
        for c in self.error_conns:
            c.close()
        self._conns.clear()

    def _stop_others(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()
        self.sentinels.clear()

    def _error(self, i):
        p = self.processes[i]
        conn = self.error_conns[i]
        if conn in self._conns and conn.poll():
            self._read_trace(conn)
        self._close()
        trace = self._traces.get(i)
        if trace is not None:
            msg = f"\n\n-- Process {i:d} terminated with the following error:\n" + trace
            return ProcessRaisedException(msg, i, p.pid)
        code = p.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {i:d} terminated with signal {name}", error_index=i,
                                          error_pid=p.pid, exit_code=code, signal_name=name)
        return ProcessExitedException(f"process {i:d} terminated with exit code {code:d}", error_index=i,
                                      error_pid=p.pid, exit_code=code)


class SpawnContext(ProcessContext):
    """Same as `torch.multiprocessing.SpawnContext` (deprecated name of ProcessContext)."""

    def __init__(self, processes, error_conns):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_conns)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Same as `torch.multiprocessing.start_processes`: fn(i, *args) in nprocs processes of any start method."""
    ctx = multiprocessing.get_context(start_method)
    processes, conns = [], []
    for i in range(nprocs):
        recv_end, send_end = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_wrap, args=(fn, i, args, send_end), daemon=daemon)
        p.start()
        send_end.close()  # the child holds the only writer: an exit without a message shows as EOF
        processes.append(p)
        conns.append(recv_end)
    context = ProcessContext(processes, conns)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Same as `torch.multiprocessing.spawn`: fn(i, *args) in nprocs spawned processes; None, or the context."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      f"start_method use:\n\t\t ember.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
