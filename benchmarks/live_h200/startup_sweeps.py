"""A sweep's wall time per cell before and after ``server.prestart_next`` (issue 42 item 5), from
the cells the sweeps wrote: the simulated server's benchmark (``benchmarks/sweep_startup.py``) and
the live lease's two start-up sweeps (``live_signoff.sh``'s ``lc-st-seq`` and ``lc-st-pre``).

    python -m benchmarks.live_h200.startup_sweeps BEFORE_SWEEP AFTER_SWEEP

Each sweep folder holds its cells (``*/result.json``, their ``timing.marks_s``) and
``sweep_wall_s.txt``, the sweep's wall measured from outside (the plan writes it). Prints the
per-cell table (what each cell waited for its server, its evals, its stop, its wall) and the
sweep's wall per cell before and after, with the bound today's marks allow.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CellTimes:
    """One cell's marks (seconds): the server's start-up, the evals, its stop, the cell's wall."""

    startup: float
    evals: float
    stop: float
    wall: float


@dataclass(frozen=True)
class Sweep:
    """A sweep as measured: its wall from outside, and each cell's marks in job order."""

    wall: float
    cells: list[CellTimes]


def cell_times(m: Mapping[str, float]) -> CellTimes:
    """A cell's marks (``timing.marks_s``) as start-up, evals, stop and wall."""
    return CellTimes(
        startup=m["ready"] - m["launch"],
        evals=m["evals_done"] - m["verified"],
        stop=m["stopped"] - m["evals_done"],
        wall=m["end"] - min(m["process_start"], 0.0),
    )


def hidden_startup(cells: list[CellTimes]) -> float:
    """Start-up a started-ahead next server would hide: each later cell's, up to the one before's
    evals and stop (the next server starts when the current one is verified)."""
    return sum(min(c.startup, p.evals + p.stop) for p, c in itertools.pairwise(cells))


def rows(label: str, sweep: Sweep) -> list[str]:
    """One sweep's per-cell rows."""
    return [
        f"| {label} | {i} | {c.startup:.2f} | {c.evals:.2f} | {c.stop:.2f} | {c.wall:.2f} |"
        for i, c in enumerate(sweep.cells)
    ]


def table(before: Sweep, after: Sweep) -> list[str]:
    """The per-cell rows of both sweeps and the before/after lines."""
    n = len(before.cells)
    bound = (before.wall - hidden_startup(before.cells)) / n
    share = sum(c.startup for c in before.cells) / before.wall
    return [
        "| sweep | cell | waited for its server s | evals s | stop s | cell wall s |",
        "|---|---|---|---|---|---|",
        *rows("today", before),
        *rows("prestart_next", after),
        "",
        f"- today: {before.wall / n:.2f} s per cell ({before.wall:.1f} s for {n} cells; "
        f"waiting for servers {share:.0%} of it)",
        f"- server.prestart_next=true: {after.wall / n:.2f} s per cell ({after.wall:.1f} s), "
        f"{1 - after.wall / before.wall:.0%} less; the bound from today's marks: {bound:.2f} s",
    ]


def read_cells(folder: Path) -> list[CellTimes]:
    """The marks of a sweep folder's cells, in job order.

    Raises:
        ValueError: a cell without an ``ok`` result, or none at all; the message names it.
    """
    from pipeline.results.store import read_result

    cells = []
    for cell_dir in sorted(p.parent for p in folder.glob("*/result.json")):
        result = read_result(cell_dir)
        if result is None or result.status != "ok":
            raise ValueError(f"{cell_dir}: no ok result ({result.status if result else 'none'})")
        cells.append(cell_times(result.marks))
    if not cells:
        raise ValueError(f"{folder}: no cell wrote a result.json")
    return cells


def read_sweep(folder: Path) -> Sweep:
    """A sweep folder's cells and its outside wall (``sweep_wall_s.txt``, the plan writes it).

    Raises:
        ValueError: no wall file, or what ``read_cells`` refuses; the message names it.
    """
    wall_file = folder / "sweep_wall_s.txt"
    if not wall_file.is_file():
        raise ValueError(f"{wall_file}: missing (the sweep's wall, written by the plan)")
    return Sweep(float(wall_file.read_text()), read_cells(folder))


def main(argv: list[str] | None = None) -> int:
    """Print the before/after table of two sweep folders; 1 naming what is missing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the sweep as today (prestart_next=false)")
    parser.add_argument("after", type=Path, help="the same sweep with server.prestart_next=true")
    args = parser.parse_args(argv)
    try:
        before, after = read_sweep(args.before), read_sweep(args.after)
    except ValueError as exc:
        print(f"startup_sweeps: {exc}", file=sys.stderr)
        return 1
    if len(before.cells) != len(after.cells):
        print(f"startup_sweeps: {len(before.cells)} cells before, {len(after.cells)} after: "
              "not the same sweep", file=sys.stderr)  # fmt: skip
        return 1
    print("\n".join(table(before, after)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
