"""The exit code of a sweep in which no cell produced a result: 1, so that a script notices.

A sweep whose cells ran exits 0 even when some failed (``mtp-eval-report`` is the gate, and a
partly failed sweep still holds what it measured). A sweep with nothing in it to judge (every
cell failed or was refused by SGLang's rules) exits 1: without GPUs every cell of
``experiment=compare_backends`` failed and the sweep exited 0.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from pipeline.report.load import sweep_folders
from pipeline.results.cell_paths import RESULT_FILE
from pipeline.results.store import read_result

NOTHING_PRODUCED = 1
PRODUCED = frozenset({"ok", "planned"})  # measured, or (a dry run) planned


def sweep_statuses(sweep_dir: Path) -> Counter[str]:
    """How many of the sweep's own cells ended with each status (an unreadable one: failed)."""
    own = sweep_folders(sweep_dir)
    folders = [p.parent for p in sweep_dir.glob(f"*/{RESULT_FILE}")]
    counts: Counter[str] = Counter()
    for folder in folders if own is None else [f for f in folders if f in own]:
        try:
            result = read_result(folder)
        except ValueError:
            counts["failed"] += 1
            continue
        counts[result.status if result is not None else "failed"] += 1
    return counts


def nothing_produced(counts: Counter[str]) -> str | None:
    """The line to end a sweep with when none of its cells produced a result, else None."""
    if any(counts[status] for status in PRODUCED):
        return None
    told = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no cell ran"
    return f"no cell of this sweep produced a result ({told}); exit code {NOTHING_PRODUCED}"


class SweepOutcomeCallback(Callback):
    """Ends a multirun with exit code 1 when no cell produced a result.

    It is listed first in ``conf/config.yaml``: Hydra calls ``on_multirun_end`` in reverse
    order, so this runs after the summary has printed its table.
    """

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra after the last job of a multirun."""
        line = nothing_produced(sweep_statuses(Path(config.hydra.sweep.dir)))
        if line is not None:
            print(f"mtp-eval: {line}", flush=True)
            raise SystemExit(NOTHING_PRODUCED)  # passes Hydra's callback guard
