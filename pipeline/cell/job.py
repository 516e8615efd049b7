"""One cell end to end: pre-flight, launch, verify, evals, accept statistics, result.json, stop.

``run_cell`` always leaves a ``result.json`` (written atomically in a ``finally``) whose
``status`` is ``ok``, ``failed``, ``unsupported`` or ``planned`` (dry run). The config is read
once, into a ``CellPlan``; every step below takes its parts.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from evals.base import Eval, make_eval
from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import initial_result, mark, overhead, record_server
from pipeline.cell.guards import check_error_rates
from pipeline.cell.launching import PlannedLaunch, plan_cell_launch, preflight_cell, started_server
from pipeline.cell.outcomes import record_failure
from pipeline.cell.phases import run_phases
from pipeline.cell.prestart import note_adopted, start_next, with_reserved_port
from pipeline.cluster.multinode import DONE_MARKER, serve_as_worker
from pipeline.config.prompt_source import SERVING_KEY
from pipeline.config.schema import RootConf
from pipeline.measuring.measure_plan import MeasurePlan
from pipeline.measuring.speed.prompts import (
    cell_prompt_pool,
    cell_prompt_pools,
)
from pipeline.results.cell_paths import node_dir, result_path
from pipeline.results.redact import redact_text, redact_tree
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_types import CellResult, NodeResult
from pipeline.results.resume import (
    claim_samples,
    finished_result,
    mark_skipped,
    samples_key,
    set_aside_for_policies,
)
from pipeline.results.store import write_json_atomic, write_result
from pipeline.serving import jit_cache, prestart_pool
from pipeline.serving.keys import secrets_of, with_api_key
from pipeline.serving.server import RunningServer
from pipeline.serving.server_checks import verify_server
from pipeline.serving.server_command import server_env


def run_cell(conf: RootConf, cell_dir: Path, job_num: int = 0) -> CellResult:
    """Run one cell and write its ``result.json``; returns the result as written.

    A non-zero node of a multi-node cell writes only ``node-<rank>/result.json``; it returns
    its draft with that node's status and ``node`` (node 0 owns the cell's result).

    Args:
        conf: the typed config of the cell.
        cell_dir: its output folder.
        job_num: Hydra's job number in a sweep (picks the GPU slot with ``server.gpus=auto``).
    """
    clock = time.monotonic()
    conf = with_api_key(conf)
    cell = with_reserved_port(CellPlan.of(conf), cell_dir)
    prestart_pool.discard(keep=cell_dir)  # a server started ahead for another cell
    result = initial_result(conf, cell.server.kind)
    result.mark("process_start", -round(_process_age_s(), 3))
    previous = _finished_before(cell, cell_dir, result)
    if previous is not None:
        prestart_pool.discard()
        return mark_skipped(cell_dir, previous, result.started_at)
    return _attempt(cell, cell_dir, result, job_num, clock)


# When this process's earlier cells ended: the jobs of a sequential multirun share one process,
# and a cell's start-up overhead is its own (the interpreter, imports and Hydra for the first cell
# only), not the cells before it.
_JOB_ENDS: list[float] = []


def _process_age_s() -> float:
    """Seconds since this process started, or since its previous cell ended."""
    started = max([psutil.Process().create_time(), *_JOB_ENDS[-1:]])
    return time.time() - started


def _finished_before(cell: CellPlan, cell_dir: Path, result: ResultDraft) -> CellResult | None:
    """The result a rerun keeps (None: run the cell); what the policies now refuse is set aside."""
    if cell.launch.dry_run:
        return None
    previous = finished_result(cell_dir, result.config_hash, cell.resume)
    if previous is None:
        note = set_aside_for_policies(cell_dir, result.config_hash, cell.resume)
        result.warnings.extend([note] if note else [])
    return previous


def _attempt(
    cell: CellPlan, cell_dir: Path, result: ResultDraft, job_num: int, clock: float
) -> CellResult:
    """Run the cell's steps, then write what they ended with; an interrupt is raised again."""
    interrupted: BaseException | None = None
    worker: NodeResult | None = None
    written: CellResult | None = None
    try:
        worker = _run(cell, cell_dir, result, job_num, clock)
    except BaseException as err:  # recorded, never lost; an interrupt is raised again below
        interrupted = record_failure(result, err, cell_dir, cell.launch.client)
    finally:
        prestart_pool.discard(only=None if interrupted else cell_dir)  # not taken: stopped
        if worker is None:
            written = _finish(result, cell, cell_dir, clock)
        _JOB_ENDS.append(time.time())
    if worker is not None:  # node 0 owns result.json; this node writes only its own
        return _worker_result(result, worker, cell_dir)
    if interrupted is not None:
        raise interrupted
    assert written is not None  # _finish ran in the finally above
    return written


def _run(
    cell: CellPlan, cell_dir: Path, result: ResultDraft, job_num: int, clock: float
) -> NodeResult | None:
    """Plan, launch, verify and measure the cell into ``result``.

    Returns:
        A worker node's own result (a non-zero node of a multi-node cell, which serves until
        node 0 is done); None when ``result`` holds the outcome (ok, unsupported, planned).
    """
    cell_dir.mkdir(parents=True, exist_ok=True)
    spec = preflight_cell(cell, result)
    if spec is None:
        return None  # unsupported: the pre-flight's findings are on the result
    evals = _evals(cell.measure)
    launch = plan_cell_launch(cell, spec, evals, cell_dir, job_num, result)
    if cell.launch.dry_run:
        jit_cache.record_before(result, launch.cache)
        result.status = "planned"
        return None
    node = launch.node
    if node is not None and not node.serves_evals:
        env, grace_s = server_env(cell.server.conf, launch.plan.env), cell.server.conf.stop_grace_s
        return serve_as_worker(launch.argv, env, cell_dir, node.node_rank, grace_s)
    _serve_and_measure(cell, launch, evals, cell_dir, result, clock)
    return None


def _evals(measure: MeasurePlan) -> dict[str, Eval]:
    """The cell's evals, each with every repeat's prompts."""
    return {name: make_eval(name, measure.repeats_of(ec)) for name, ec in measure.evals.items()}


def _serve_and_measure(
    cell: CellPlan,
    launch: PlannedLaunch,
    evals: dict[str, Eval],
    cell_dir: Path,
    result: ResultDraft,
    clock: float,
) -> None:
    """Start the server, verify it, run the evals, the speed and parity phases on it, stop it."""
    pool = cell_prompt_pool(cell.speed, evals, cell.launch.model)  # before the server: tokenizer
    parity_pool = cell_prompt_pool(cell.parity, evals, cell.launch.model, "parity.prompts")
    serving_pool = cell_prompt_pools(cell.serving, evals, cell.launch.model, SERVING_KEY)
    claim_samples(cell_dir, result.config_hash, result.warnings)  # a failed start: no other run's
    launched = mark(result, "launch", clock)
    with jit_cache.recorded(result, launch.cache), started_server(cell, launch, cell_dir) as server:
        try:
            note_adopted(server, mark(result, "ready", clock) - launched, result)
            _verify(cell, launch, server, cell_dir, result)
            mark(result, "verified", clock)
            start_next(cell, result)  # server.prestart_next: beside this cell's evals
            pools = (pool, parity_pool, serving_pool)
            run_phases(cell, server, evals, (cell_dir, *pools), result, clock)
        finally:  # before node 0's server stops: the other nodes die with it, and may now
            _release_other_nodes(cell.launch.nodes, cell_dir, "stopping")
    check_error_rates(result.eval_summaries(), cell.launch.client.max_error_rate)
    mark(result, "stopped", clock)
    result.status = "ok"


def _verify(
    cell: CellPlan,
    launch: PlannedLaunch,
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
) -> None:
    """Hold the running server to the plan; the samples then belong to what it really runs."""
    record_server(result, server)
    verify_server(cell.checks, launch.plan, server, launch.gpu, result)
    measured = samples_key(result.as_result())
    claim_samples(cell_dir, measured, result.warnings)


def _worker_result(result: ResultDraft, worker: NodeResult, cell_dir: Path) -> CellResult:
    """Write a worker node's own result; return the draft with that node's status."""
    write_json_atomic(result_path(node_dir(cell_dir, worker.node_rank)), worker.to_json())
    node = {"status": worker.status, "node": worker.to_json()}
    return CellResult.from_json({**result.to_json(), **node})


def _finish(result: ResultDraft, cell: CellPlan, cell_dir: Path, clock: float) -> CellResult:
    from pipeline.cell.provenance import now_iso

    result.set_ended(now_iso())
    mark(result, "end", clock)
    result.set_overhead(overhead(result.marks))
    secrets = secrets_of(cell.launch.client)
    if secrets:
        result.redact_error(lambda text: redact_text(text, secrets))
    if secrets and cell_dir.exists():
        redact_tree(cell_dir, secrets)  # SGLang prints its server_args, api_key included
    written = write_result(cell_dir, result.to_json())
    # Also when node 0 never started.
    _release_other_nodes(cell.launch.nodes, cell_dir, result.status)
    return written


def _release_other_nodes(nodes: int, cell_dir: Path, why: str) -> None:
    # The other nodes of a multi-node cell stop their launchers once this marker exists. It
    # must come before node 0's server stops: live, node 1's SGLang died 7 s before a marker
    # written after the stop, and was recorded as failed.
    if nodes > 1 and cell_dir.is_dir():
        (cell_dir / DONE_MARKER).write_text(why + "\n")
