"""Run under mpiexec by test_distributed.py: rank 1 fails in the way named by argv[1] while rank 0 waits in
all_reduce; the job must end with an error, not hang."""
import datetime
import os
import signal
import sys
import time

import ember
import ember.distributed as dist


def main(mode):
    timeout = datetime.timedelta(seconds=2 if mode == "timeout" else 60)
    dist.init_process_group("gloo", timeout=timeout)
    if dist.get_rank() == 1:
        if mode == "raise":
            raise ValueError("rank 1 fails on purpose")
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "exit":
            sys.exit(3)
        if mode == "timeout":
            time.sleep(30)
    t = ember.ones(4)
    dist.all_reduce(t)
    print("UNREACHABLE: all_reduce returned", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
