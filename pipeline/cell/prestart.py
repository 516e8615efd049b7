"""``server.prestart_next``: the next cell's server started while this cell's evals run.

The app tells the cell which cell comes next in its sweep (``expect_next``: Hydra's basic
launcher runs them one after another in this process). Once this cell's own server is verified,
``start_next`` plans the next cell with the very functions that cell will use (pre-flight, GPUs,
argv, port) and starts its server into the next cell's folder (``serving.prestart_pool``). The
next cell reuses the port kept for it (``with_reserved_port``), so its own plan says the same
command, and takes the server only then; it verifies it as any other. Nothing this cell measures
depends on it: a failure to start ahead is one warning here, and the next cell starts its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from evals.base import make_eval
from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import initial_result
from pipeline.cell.launching import plan_cell_launch, preflight_cell
from pipeline.config.prestart_checks import KEY, prestart_problems
from pipeline.config.schema import RootConf
from pipeline.results.result_draft import ResultDraft
from pipeline.results.store import read_result
from pipeline.serving import prestart_pool
from pipeline.serving.keys import with_api_key
from pipeline.serving.server import RunningServer
from pipeline.serving.server_command import server_env


@dataclass(frozen=True)
class NextCell:
    """The cell after this one in the sweep: its config, folder and Hydra job number."""

    conf: RootConf
    cell_dir: Path
    job_num: int


_NEXT: list[NextCell] = []


def expect_next(nxt: NextCell | None) -> None:
    """Say which cell comes after the one about to run (None: none, or the setting is off)."""
    _NEXT[:] = [] if nxt is None else [nxt]


def with_reserved_port(cell: CellPlan, cell_dir: Path) -> CellPlan:
    """``cell`` on the port its server was started on ahead, if it was (else unchanged)."""
    port = prestart_pool.reserved_port(cell_dir)
    if port is None or cell.launch.options.port:
        return cell
    options = dataclasses.replace(cell.launch.options, port=port)
    return dataclasses.replace(cell, launch=dataclasses.replace(cell.launch, options=options))


def start_next(current: CellPlan, result: ResultDraft) -> None:
    """Start the next cell's server now, if the setting is on; what happened on ``result``."""
    if not current.server.conf.prestart_next or not _NEXT:
        return
    nxt = _NEXT.pop()
    why = _not_ahead(nxt)
    if why:
        result.warnings.append(f"{KEY}: the next cell's server was not started ahead: {why}")
        return
    try:
        _launch_next(nxt)
    except Exception as err:  # this cell's measurements never depend on the next cell's server
        prestart_pool.discard()
        result.warnings.append(f"{KEY}: the next cell's server was not started ahead: {err}")
        return
    result.warnings.append(
        f"{KEY}: the next cell's server ({nxt.cell_dir.name}) started on this GPU during this "
        "cell's evals: their wall times are not those of a cell run alone"
    )


def note_adopted(server: RunningServer, waited_s: float, result: ResultDraft) -> None:
    """Say on ``result`` that its server was started ahead (launch to ready, and before this cell).

    ``waited_s``: what this cell itself waited for it.
    """
    if server.prestarted:
        result.warnings.append(
            f"{KEY}: this cell's server was started during the previous cell's evals; "
            f"{server.ready_s:.1f} s from its launch to ready, "
            f"{server.ready_s - waited_s:.1f} s of it before this cell; verified as any other"
        )


def _not_ahead(nxt: NextCell) -> str:
    """Why the next cell is not started ahead ('' when it is)."""
    if not nxt.conf.server.prestart_next:
        return f"it sets {KEY}=false"
    problems = prestart_problems(nxt.conf)
    if problems:
        return problems[0]
    done = read_result(nxt.cell_dir)
    if done is not None and done.status == "ok":
        return "it has a result already (a rerun skips it)"
    return ""


def _launch_next(nxt: NextCell) -> None:
    """Plan the next cell as it will plan itself and start its server into the pool.

    Raises:
        RuntimeError: its pre-flight refuses it, or the pipeline starts no server for it.
    """
    conf = with_api_key(nxt.conf)
    cell = CellPlan.of(conf)
    draft = initial_result(conf, cell.server.kind)  # thrown away: the cell plans again
    spec = preflight_cell(cell, draft)
    if spec is None:
        raise RuntimeError("its pre-flight refuses it")
    evals = {n: make_eval(n, cell.measure.repeats_of(ec)) for n, ec in cell.measure.evals.items()}
    nxt.cell_dir.mkdir(parents=True, exist_ok=True)
    launch = plan_cell_launch(cell, spec, evals, nxt.cell_dir, nxt.job_num, draft)
    if not launch.argv or launch.node is not None:
        raise RuntimeError("the pipeline starts no single server for it")
    env = server_env(cell.server.conf, launch.plan.env)
    grace_s = cell.server.conf.stop_grace_s
    prestart_pool.start(nxt.cell_dir, launch.argv, env, launch.plan.port, grace_s)
