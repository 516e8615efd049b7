"""The exit code of a sweep: 0 when every cell produced its result, 1 when any cell failed.

A CI job trusts the exit code, so a sweep in which a cell failed (a port held by another
server, a crash, an interrupted job, a job that left no result) exits 1 even when other cells
ran: a pinned-port sweep that lost 7 of 8 cells used to exit 0. The cells that ran keep their
results, and ``mtp-eval-report`` still judges them; a rerun of the same command retries only
the failed cells. Cells refused by SGLang's own rules (``unsupported``) are an outcome, not a
failure: a sweep over every variant and GPU expects some. A sweep in which no cell produced a
result says so in its own words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from pipeline.report.load.cells import MULTIRUN, sweep_folders
from pipeline.report.load.expected import expected_jobs
from pipeline.results.cell_paths import RESULT_FILE
from pipeline.results.store import read_result

CELLS_FAILED = 1
NOTHING_PRODUCED = CELLS_FAILED  # kept: the name older code and tests import
PRODUCED = frozenset({"ok", "planned"})  # measured, or (a dry run) planned
_NAMED = 3  # failed cells named in the line; the rest are counted


@dataclass(frozen=True)
class CellOutcome:
    """How one of the sweep's cells ended: its name, status and error kind ('' if none)."""

    name: str
    status: str
    error_kind: str = ""


def sweep_outcomes(sweep_dir: Path) -> list[CellOutcome]:
    """How each of the sweep's own cells ended (an unreadable result: failed)."""
    own = sweep_folders(sweep_dir)
    folders = sorted(p.parent for p in sweep_dir.glob(f"*/{RESULT_FILE}"))
    outcomes = []
    for folder in folders if own is None else [f for f in folders if f in own]:
        try:
            result = read_result(folder)
        except ValueError:
            outcomes.append(CellOutcome(folder.name, "failed", "unreadable result.json"))
            continue
        if result is None:
            outcomes.append(CellOutcome(folder.name, "failed"))
            continue
        kind = result.error.kind if result.error is not None else ""
        outcomes.append(CellOutcome(result.cell.name, result.status, kind))
    return outcomes + _without_result(sweep_dir, len(outcomes) if own is not None else None)


def _without_result(sweep_dir: Path, found: int | None) -> list[CellOutcome]:
    """A failed outcome per job of the sweep that left no result (a SLURM job cancelled early).

    ``found``: how many of the sweep's own jobs have a result; None when its jobs are unknown.
    """
    if found is None or not (sweep_dir / MULTIRUN).is_file():
        return []
    jobs, _ = expected_jobs(sweep_dir / MULTIRUN)
    left = len(jobs) - found
    return [CellOutcome("a job", "failed", "left no result.json")] * max(left, 0)


def sweep_statuses(sweep_dir: Path) -> Counter[str]:
    """How many of the sweep's own cells ended with each status (an unreadable one: failed)."""
    return Counter(o.status for o in sweep_outcomes(sweep_dir))


def nothing_produced(counts: Counter[str]) -> str | None:
    """The line to end a sweep with when none of its cells produced a result, else None."""
    if any(counts[status] for status in PRODUCED):
        return None
    told = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no cell ran"
    return f"no cell of this sweep produced a result ({told}); exit code {NOTHING_PRODUCED}"


def some_failed(outcomes: Sequence[CellOutcome]) -> str | None:
    """The line to end a sweep with when some of its cells failed and others ran, else None."""
    failed = [o for o in outcomes if o.status == "failed"]
    if not failed:
        return None
    named = [f"{o.name}: {o.error_kind}" if o.error_kind else o.name for o in failed[:_NAMED]]
    more = f" and {len(failed) - _NAMED} more" if len(failed) > _NAMED else ""
    return (
        f"{len(failed)} of {len(outcomes)} cells failed ({'; '.join(named)}{more}); the other "
        "cells' results are kept and mtp-eval-report judges them; the same command again "
        f"retries only the failed cells; exit code {CELLS_FAILED}"
    )


def sweep_end_line(outcomes: Sequence[CellOutcome]) -> str | None:
    """The line that ends the sweep with exit code 1, or None when it exits 0."""
    return nothing_produced(Counter(o.status for o in outcomes)) or some_failed(outcomes)


class SweepOutcomeCallback(Callback):
    """Ends a multirun with exit code 1 when a cell failed or none produced a result.

    It is listed first in ``conf/config.yaml``: Hydra calls ``on_multirun_end`` in reverse
    order, so this runs after the summary has printed its table.
    """

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra after the last job of a multirun."""
        line = sweep_end_line(sweep_outcomes(Path(config.hydra.sweep.dir)))
        if line is not None:
            print(f"mtp-eval: {line}", flush=True)
            raise SystemExit(CELLS_FAILED)  # passes Hydra's callback guard
