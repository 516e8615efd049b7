"""Progress of an eval's requests: a tqdm bar on a terminal, a line now and then elsewhere.

Off a terminal (SLURM logs, CI) tqdm hides itself, which left hours of silence; a line with
done / total, the rate and the time so far is printed every ``client.progress_every_s`` instead.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class _NoBar:
    """Stands in for tqdm when progress is off (tqdm's import alone costs about 0.1 s)."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        """Nothing to show."""


class LineProgress:
    """Progress off a terminal (SLURM logs, CI): a line every ``every_s`` seconds and at the end.

    Each line says the eval, done / total, the rate since the start and the time so far.
    """

    def __init__(self, total: int, desc: str, every_s: float, out: TextIO | None = None) -> None:
        self.total, self.desc, self.every_s = total, desc, every_s
        self.out = out if out is not None else sys.stdout
        self.done, self.said = 0, 0
        self.start = self.last = time.monotonic()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.done != self.said:  # the closing count, unless the last line already said it
            self._say()

    def update(self, n: int) -> None:
        """Count ``n`` finished requests; say so when ``every_s`` has passed."""
        self.done += n
        if time.monotonic() - self.last >= self.every_s:
            self._say()

    def _say(self) -> None:
        self.last, self.said = time.monotonic(), self.done
        elapsed = self.last - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        share = 100 * self.done / self.total if self.total else 100.0
        print(
            f"{self.desc}: {self.done}/{self.total} requests ({share:.0f}%), {rate:.1f} req/s, "
            f"{elapsed:.0f} s",
            file=self.out,
            flush=True,
        )


def progress_bar(progress: bool, total: int, desc: str, every_s: float = 30.0) -> Any:
    """What shows a run's progress: nothing, a tqdm bar on a terminal, else a line now and then."""
    if not progress:
        return _NoBar()
    if not sys.stderr.isatty():  # tqdm draws on stderr; off a terminal a line now and then
        return LineProgress(total, desc, every_s)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="req")
