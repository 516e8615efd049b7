"""A line every few seconds while a call to a server waits for its answer: never a silent wait.

A URL that accepts the connection and never answers held ``server=external`` for its whole
``server.external_timeout_s`` (60 s) without a word before the message that names the fix.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator

WAIT_PROGRESS_S = 5.0  # "every few seconds": a reader knows it is waiting, not hung


def waiting_line(what: str, waited_s: float, timeout_s: float) -> str:
    """What is printed while ``what`` has waited ``waited_s`` of at most ``timeout_s``."""
    return f"mtp-eval: still waiting for {what}: {waited_s:.0f} s of at most {timeout_s:g} s"


@contextlib.contextmanager
def announced_wait(what: str, timeout_s: float, every_s: float = WAIT_PROGRESS_S) -> Iterator[None]:
    """Print :func:`waiting_line` to stderr every ``every_s`` until the block ends.

    Nothing is printed when the block ends first, so a prompt answer costs no line.
    """
    done = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        while not done.wait(every_s):
            print(
                waiting_line(what, time.monotonic() - start, timeout_s), file=sys.stderr, flush=True
            )

    ticker = threading.Thread(target=tick, name="announced-wait", daemon=True)
    if timeout_s > every_s:  # a wait shorter than one interval never needs a line
        ticker.start()
    try:
        yield
    finally:
        done.set()
        if ticker.is_alive():
            ticker.join()
