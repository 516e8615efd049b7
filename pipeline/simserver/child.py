"""Stand-in for SGLang's scheduler process (stdlib only; run as a script, not imported).

The simulated server starts this once, with ``argv[0]`` set to ``sglang::scheduler_TP0`` so that
``ps`` shows it as SGLang's scheduler does. Like the real one it does not watch its parent: when
the launcher dies without cleaning up, the pipeline's process-group teardown must remove it.
With ``--crash-after S`` it prints SGLang's scheduler failure and sends SIGQUIT to its parent,
which then logs the SIGQUIT message and kills itself (SGLang's ``kill_process_tree``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import sys
import time

_PR_SET_NAME = 15


def _set_comm(name: str) -> None:
    """Set the kernel's process name (``ps -o comm``), best effort: Linux glibc only."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def _crash(parent: int, message: str) -> None:
    print(
        "Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "sglang/srt/managers/scheduler.py", line 3104, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, ...)\n"
        '  File "sglang/srt/model_executor/model_runner.py", line 618, in initialize\n'
        "    self.init_attention_backend()\n"
        f"{message}",
        file=sys.stderr,
        flush=True,
    )
    os.kill(parent, signal.SIGQUIT)
    sys.exit(1)


def main() -> None:
    """Idle until killed, or crash on schedule."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="sglang::scheduler_TP0")
    parser.add_argument("--crash-after", type=float)
    parser.add_argument("--crash-message", default="RuntimeError: simulated scheduler failure")
    args = parser.parse_args()
    _set_comm(args.name)
    if args.crash_after is not None:
        time.sleep(args.crash_after)
        _crash(os.getppid(), args.crash_message)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
