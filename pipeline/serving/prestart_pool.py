"""Servers started ahead for a later cell of this process's sweep (``server.prestart_next``).

Hydra's basic launcher runs a sweep's cells one after another in one process; with the setting
on, cell k starts cell k+1's server here while its own evals run. The pool holds at most that one
server, keyed by its cell folder, its whole argv and its environment: cell k+1 takes it only when
its own plan says exactly the same command (``take``), and still verifies it as any other
(``/server_info``). Whatever is not taken is stopped: another cell's entry when a cell starts, a
cell's own when it ends, everything on an interrupt and at exit.
"""

from __future__ import annotations

import atexit
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.results.cell_paths import server_log_path
from pipeline.serving.server import launch, stop


@dataclass(frozen=True)
class Prestarted:
    """A server started for ``cell_dir`` before that cell ran."""

    cell_dir: Path
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]  # sorted items: the whole environment it was started with
    port: int
    process: subprocess.Popen[bytes]
    started: float  # time.monotonic() at its launch
    grace_s: float  # its cell's server.stop_grace_s


_POOL: list[Prestarted] = []
_registered: list[bool] = []  # the atexit hook, once per process


def start(cell_dir: Path, argv: list[str], env: dict[str, str], port: int, grace_s: float) -> None:
    """Launch ``argv`` for the cell in ``cell_dir`` (its ``server.log``); any other entry stops."""
    discard()
    if not _registered:
        atexit.register(discard)
        _registered.append(True)
    process = launch(argv, env, server_log_path(cell_dir))
    entry = Prestarted(cell_dir, tuple(argv), _key(env), port, process, time.monotonic(), grace_s)
    _POOL.append(entry)


def reserved_port(cell_dir: Path) -> int | None:
    """The port of the server started for ``cell_dir``, which that cell's plan must reuse."""
    return next((e.port for e in _POOL if e.cell_dir == cell_dir), None)


def take(cell_dir: Path, argv: list[str], env: dict[str, str]) -> Prestarted | None:
    """The server started for this cell when it runs exactly ``argv`` with ``env``, still alive.

    Anything else started for the cell (another command, an exited process) is stopped, and the
    cell launches its own as it would without the setting.
    """
    mine = [e for e in _POOL if e.cell_dir == cell_dir]
    for entry in mine:
        _POOL.remove(entry)
    same = [e for e in mine if e.argv == tuple(argv) and e.env == _key(env)]
    taken = same[0] if same and same[0].process.poll() is None else None
    for entry in mine:
        if entry is not taken:
            stop(entry.process, entry.grace_s)
    return taken


def discard(keep: Path | None = None, only: Path | None = None) -> None:
    """Stop the pooled servers: all but ``keep``'s, or only ``only``'s when given."""
    for entry in list(_POOL):
        if entry.cell_dir == keep or (only is not None and entry.cell_dir != only):
            continue
        _POOL.remove(entry)
        stop(entry.process, entry.grace_s)


def _key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(env.items()))
