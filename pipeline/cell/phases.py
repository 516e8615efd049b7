"""The phases a cell runs on its verified server, in their order (``job`` starts and stops it).

(Parity first, with ``parity.gate``,) the evals, the speed phase, the serving phase, (parity
last): each phase after the evals runs alone on the server, so nothing else moves its figures.
"""

from __future__ import annotations

from pathlib import Path

from evals.base import Eval
from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import mark
from pipeline.cell.parity_step import accuracy_goes_on, parity_step, runs_first, runs_last
from pipeline.config.serving_checks import evals_run
from pipeline.measuring.measure import measure_cell
from pipeline.measuring.speed.prompts import EvalPools, PromptPool
from pipeline.measuring.speed.run import speed_phase
from pipeline.measuring.speed.serving.run import ServingTarget, serving_phase
from pipeline.results.result_draft import ResultDraft
from pipeline.serving.server import RunningServer


def run_phases(
    cell: CellPlan,
    server: RunningServer,
    evals: dict[str, Eval],
    where: tuple[Path, PromptPool | None, PromptPool | None, EvalPools | None],
    result: ResultDraft,
    clock: float,
) -> None:
    """The phases on the verified server: (parity first,) evals, speed, serving, (parity last).

    ``where``: the cell folder and the prompt pools of the speed, parity and serving phases (the
    serving phase's: one per eval its ``eval:PATTERN`` matched).
    """
    cell_dir, pool, parity_pool, serving_pool = where
    keys = (cell.launch.client.api_key, cell.launch.client.admin_api_key)
    at = (server.base_url, keys, cell_dir)
    goes_on = True
    if runs_first(cell):  # the release sign-off: a parity NO-GO spends no accuracy repeat
        run = parity_step(cell, at, parity_pool, result, clock)
        goes_on = accuracy_goes_on(cell, run, cell_dir, cell.measure.planned_repeats(), result)
    # evals=[] with speed.enabled: the speed phase alone; speculation off: prompts only
    if evals and goes_on and evals_run(cell.serving):
        measure_cell(cell.measure, evals, server, cell_dir, result)
    mark(result, "evals_done", clock)
    if cell.speed.enabled:  # after the evals, so nothing else runs on the server
        speed_phase(cell.speed, server, keys, (cell.launch.model.path, pool), result)
        mark(result, "speed_done", clock)
    if cell.serving.enabled:  # after the evals and the speed phase, alone on the server
        serving_phase(cell.serving, serving_target(cell, server), result, serving_pool)
        mark(result, "serving_done", clock)
    if runs_last(cell):  # last: its prefills leave the evals' counters alone
        parity_step(cell, at, parity_pool, result, clock)


def serving_target(cell: CellPlan, server: RunningServer) -> ServingTarget:
    """The serving phase's server, model name, client settings and GPUs (``model.tp``)."""
    tp = max(cell.launch.model.tp, 1)
    return ServingTarget(server.base_url, cell.measure.model_name, cell.launch.client, tp)
