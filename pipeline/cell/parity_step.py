"""The parity phase as a step of the cell: first with ``parity.gate``, else last (issue 39).

Last (the default), its prefills come after every other phase and leave the evals' counters
alone. With ``parity.gate`` (``experiment=release_signoff``) it runs before the evals, and a
candidate's parity NO-GO (``measuring.parity_gate``) ends its sign-off there: the evals are not
run and the result's ``parity.gate`` names the repeats not spent. Either way the result's
``parity`` block records when the phase ran and what it cost (``benchmarks/parity_cost.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import mark
from pipeline.measuring.parity_source import resolve_source
from pipeline.measuring.speed.prompts import PromptPool
from pipeline.results.parity_block import SKIPPED
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import ParityJson

if TYPE_CHECKING:  # the phase's statistics (scipy.special) load only in a cell that runs it
    from pipeline.measuring.parity_run import ParityRun

log = logging.getLogger(__name__)


def runs_first(cell: CellPlan) -> bool:
    """Whether the parity phase runs before the evals (``parity.gate``)."""
    return cell.parity.enabled and cell.parity.gate


def runs_last(cell: CellPlan) -> bool:
    """Whether the parity phase runs after every other phase (the default)."""
    return cell.parity.enabled and not cell.parity.gate


def parity_step(
    cell: CellPlan,
    where: tuple[str, tuple[str | None, str | None], Path],
    pool: PromptPool | None,
    result: ResultDraft,
    clock: float,
) -> ParityRun:
    """Run the phase on the server at ``where`` (base url, keys, cell folder); record its cost."""
    from pipeline.measuring.parity_run import parity_phase

    base_url, keys, cell_dir = where
    conf = resolve_source(cell.parity, cell.measure.sequential, cell_dir, result)
    run = parity_phase(conf, base_url, keys, cell_dir, pool)
    order = "first" if cell.parity.gate else "last"
    mark(result, f"parity_{order}_done" if cell.parity.gate else "parity_done", clock)
    result.set_parity(_block(order, run))
    return run


def _block(order: str, run: ParityRun) -> ParityJson:
    return {"order": order, "sequences": run.sequences, "wall_s": round(run.wall_s, 3),
            "rescore_s": round(run.rescore_s, 3)}  # fmt: skip


def accuracy_goes_on(
    cell: CellPlan, run: ParityRun, cell_dir: Path, repeats: Mapping[str, int], result: ResultDraft
) -> bool:
    """Judge a gated candidate's parity now; False (and recorded) when NO-GO ends its sign-off.

    ``repeats``: each eval's repeats as its design would run them (at most, when sequential).
    A cell that generated the sequences (the baseline) is not judged and goes on.
    """
    if run.summary is None:
        return True
    # The gate judges by the report's rule (scipy.stats and the report's judging room): imported
    # here so that a cell without parity.gate starts without them (test_start_up_imports).
    from pipeline.measuring.parity_gate import NO_GO, gate_verdict

    gate = gate_verdict(cell_dir, cell.measure.sequential)
    stop = gate["verdict"] == NO_GO and bool(repeats)
    gate["accuracy"] = SKIPPED if stop else "run"
    gate["skipped"] = dict(repeats) if stop else {}
    block = _block("first", run)
    block["gate"] = gate
    result.set_parity(block)
    if stop:
        line = ", ".join(f"{name} {n} repeats" for name, n in repeats.items())
        result.warnings.append(
            f"parity {gate['reason']}: the sign-off ends before its accuracy repeats; "
            f"not run: {line} (parity.gate)"
        )
    log.info("parity gate: %s (%s)", gate["verdict"], gate["reason"])
    return not stop
