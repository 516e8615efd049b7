"""One cell end to end: pre-flight, launch, verify, evals, accept statistics, result.json, stop.

``run_cell`` always leaves a ``result.json`` (written atomically in a ``finally``) whose
``status`` is ``ok``, ``failed``, ``unsupported`` or ``planned`` (dry run).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from backends.compat import preflight
from backends.gpu import GpuInfo
from backends.launch import LaunchOptions, LaunchPlan, plan_launch
from backends.resolved import CellSpec
from backends.rule import FATAL
from evals.base import Eval, make_eval
from evals.eval_conf import EvalConf
from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import initial_result, mark, overhead, record_plan, record_server
from pipeline.cell.guards import check_error_rates, check_port_free
from pipeline.cell.outcomes import WorkerNodeDone, record_failure, unsupported
from pipeline.cluster.gpu_slots import gpus_setting, server_devices
from pipeline.cluster.multinode import (
    DONE_MARKER,
    NodePlan,
    node_plan,
    serve_as_worker,
)
from pipeline.config.schema import RootConf, SequentialConf, gpus_per_node
from pipeline.measuring.measure import measure_cell
from pipeline.measuring.parity_run import parity_phase
from pipeline.measuring.speed_prompts import cell_prompt_pool
from pipeline.measuring.speed_run import speed_phase
from pipeline.results.cell_error import CellError
from pipeline.results.cell_paths import node_dir, result_path, server_log_path
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
from pipeline.serving import jit_cache
from pipeline.serving.keys import secrets_of, with_api_key
from pipeline.serving.server import (
    HealthPolicy,
    RunningServer,
    external_server,
    free_port,
    managed_server,
)
from pipeline.serving.server_checks import check_label_before_launch, plan_gpu, verify_server
from pipeline.serving.server_command import server_argv, server_env
from pipeline.serving.server_kind import ServerPlan
from pipeline.serving.sglang_release import sglang_version


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
    cell = CellPlan.of(conf)
    result = initial_result(conf, cell.server.kind)
    result.mark("process_start", -round(_process_age_s(), 3))
    previous = None if conf.dry_run else finished_result(cell_dir, result.config_hash, cell.resume)
    if previous is not None:
        return mark_skipped(cell_dir, previous, result.started_at)
    note = (
        None if conf.dry_run else set_aside_for_policies(cell_dir, result.config_hash, cell.resume)
    )
    result.warnings.extend([note] if note else [])
    interrupted: BaseException | None = None
    worker: NodeResult | None = None
    written: CellResult | None = None
    try:
        _run(conf, cell, cell_dir, result, job_num, clock)
    except WorkerNodeDone as done:
        worker = done.outcome
    except BaseException as err:  # recorded, never lost; an interrupt is raised again below
        interrupted = record_failure(result, err, cell_dir, conf.client)
    finally:
        if worker is None:
            written = _finish(result, conf, cell_dir, clock)
        _JOB_ENDS.append(time.time())
    if worker is not None:  # node 0 owns result.json; this node writes only its own
        write_json_atomic(result_path(node_dir(cell_dir, worker.node_rank)), worker.to_json())
        node = {"status": worker.status, "node": worker.to_json()}
        return CellResult.from_json({**result.to_json(), **node})
    if interrupted is not None:
        raise interrupted
    assert written is not None  # _finish ran in the finally above
    return written


# When this process's earlier cells ended: the jobs of a sequential multirun share one process,
# and a cell's start-up overhead is its own (the interpreter, imports and Hydra for the first cell
# only), not the cells before it.
_JOB_ENDS: list[float] = []


def _process_age_s() -> float:
    """Seconds since this process started, or since its previous cell ended."""
    started = max([psutil.Process().create_time(), *_JOB_ENDS[-1:]])
    return time.time() - started


def _run(
    conf: RootConf, cell: CellPlan, cell_dir: Path, result: ResultDraft, job_num: int, clock: float
) -> None:
    cell_dir.mkdir(parents=True, exist_ok=True)
    gpu = plan_gpu(conf.gpu, cell.server, conf.client.api_key, conf.dry_run)
    version = sglang_version(cell.server, conf.client.api_key)
    options = _options(conf, cell.server)
    spec = CellSpec(
        conf.model, conf.backend, conf.kv_dtype, conf.skip_softmax, gpu, version, options
    )
    findings = preflight(spec)
    result.set_preflight([dataclasses.asdict(f) for f in findings])
    result.warnings.extend(f"{f.outcome}: {f.message}" for f in findings if f.outcome not in FATAL)
    result.set_platform(dataclasses.asdict(gpu), version)
    blocking = [f for f in findings if f.outcome in FATAL]
    if blocking:
        unsupported(result, blocking)
        return
    sequential = conf.sequential
    evals = {name: make_eval(name, _repeats_for(sequential, ec)) for name, ec in conf.evals.items()}
    plan = plan_launch(spec)
    try:
        node = node_plan(conf.cluster.nodes, os.environ, conf.cluster.dist_init_port)
        plan = _with_devices(conf, cell.server, plan, gpu, job_num, node)
    except ValueError as err:  # nodes, tp and visible GPUs that do not fit: the user's settings
        raise CellError("config", str(err)) from err
    check_label_before_launch(cell.checks, plan, result)
    cache = _jit_cache(conf, cell.server)
    if cache is not None:
        plan = dataclasses.replace(plan, env={**plan.env, **jit_cache.cache_env(cache)})
    if node is not None:  # one SGLang launcher per node, node 0 serving HTTP
        plan = dataclasses.replace(plan, args=[*plan.args, *node.args()])
    argv = _argv(cell.server, plan, cell_dir, evals)
    record_plan(result, plan, argv, {**plan.env, **conf.server.env})
    if conf.dry_run:
        jit_cache.record_before(result, cache)
        result.status = "planned"
        return
    if node is not None and not node.serves_evals:
        env = server_env(conf.server, plan.env)
        worker = serve_as_worker(argv, env, cell_dir, node.node_rank, conf.server.stop_grace_s)
        raise WorkerNodeDone(worker)
    pool = cell_prompt_pool(cell.speed, evals, conf.model)  # before the server: its tokenizer
    parity_pool = cell_prompt_pool(cell.parity, evals, conf.model, "parity.prompts")
    claim_samples(
        cell_dir, result.config_hash, result.warnings
    )  # a failed start leaves no other run's samples
    mark(result, "launch", clock)
    with (
        jit_cache.recorded(result, cache),
        _server(conf, cell.server, plan, argv, cell_dir) as server,
    ):
        try:
            mark(result, "ready", clock)
            record_server(result, server)
            verify_server(cell.checks, plan, server, gpu, result)
            # After verify: the samples belong to what the server really ran.
            measured = samples_key(CellResult.from_json(result.to_json()))
            claim_samples(cell_dir, measured, result.warnings)
            mark(result, "verified", clock)
            if evals:  # evals=[] with speed.enabled: the speed phase alone
                measure_cell(cell.measure, evals, server, cell_dir, result)
            mark(result, "evals_done", clock)
            if cell.speed.enabled:  # after the evals, so nothing else runs on the server
                keys = (conf.client.api_key, conf.client.admin_api_key)
                speed_phase(cell.speed, server, keys, (conf.model.path, pool), result)
                mark(result, "speed_done", clock)
            if cell.parity.enabled:  # last: its prefills leave the evals' counters alone
                keys = (conf.client.api_key, conf.client.admin_api_key)
                parity_phase(cell.parity, server.base_url, keys, cell_dir, parity_pool)
                mark(result, "parity_done", clock)
        finally:  # before node 0's server stops: the other nodes die with it, and may now
            _release_other_nodes(conf.cluster.nodes, cell_dir, "stopping")
    check_error_rates(result.eval_summaries(), conf.client.max_error_rate)
    mark(result, "stopped", clock)
    result.status = "ok"


def _repeats_for(sequential: SequentialConf, ec: EvalConf) -> EvalConf:
    # Sequential stopping: prompts for every repeat exist; the measuring loop sends them in rounds.
    if sequential.enabled:
        return dataclasses.replace(ec, repeats=sequential.max_repeats)
    return ec


def _jit_cache(conf: RootConf, planned: ServerPlan) -> Path | None:
    # Only a server the pipeline starts gets the folder; an external one keeps its own.
    if not planned.kind.launched:
        return None
    return jit_cache.cache_root(conf.server.jit_cache_dir, os.environ)


def _options(conf: RootConf, planned: ServerPlan) -> LaunchOptions:
    server = conf.server
    port = server.port or (free_port(server.host) if planned.kind.launched else 30000)
    return LaunchOptions(
        host=server.host,
        port=port,
        random_seed=server.random_seed,
        mem_fraction_static=server.mem_fraction_static,
        max_running_requests=server.max_running_requests,
        enable_metrics=server.enable_metrics,
        api_key=conf.client.api_key,
        admin_api_key=conf.client.admin_api_key,
        extra_args=tuple(server.extra_args),
        env=tuple(sorted(server.env.items())),
    )


def _with_devices(
    conf: RootConf,
    planned: ServerPlan,
    plan: LaunchPlan,
    gpu: GpuInfo,
    job_num: int,
    node: NodePlan | None,
) -> LaunchPlan:
    tp, kind = conf.model.tp, planned.kind
    setting = gpus_setting(conf.server.gpus, kind.gpu_here and not kind.docker, os.environ)
    per_node = None if node is None else (node.local_rank, gpus_per_node(tp, node.nnodes))
    devices = server_devices(setting, job_num, tp, os.environ, gpu.count, per_node)
    if devices is None:
        return plan
    return dataclasses.replace(plan, env={**plan.env, "CUDA_VISIBLE_DEVICES": devices})


def _argv(
    planned: ServerPlan, plan: LaunchPlan, cell_dir: Path, evals: dict[str, Eval]
) -> list[str]:
    if not planned.kind.launched:
        return []
    key = [entry for ev in evals.values() for entry in ev.answer_key()]
    return server_argv(planned, plan.args, plan.env, cell_dir, key)


@contextlib.contextmanager
def _server(
    conf: RootConf, planned: ServerPlan, plan: LaunchPlan, argv: list[str], cell_dir: Path
) -> Iterator[RunningServer]:
    server = conf.server
    policy = HealthPolicy(
        server.startup_timeout_s,
        server.health_poll_initial_s,
        server.health_poll_max_s,
        server.progress_every_s,
        tuple(secrets_of(conf.client)),
    )
    if planned.kind.external:
        if not server.base_url:
            raise CellError("config", "server=external needs server.base_url=http://host:port")
        bounded = dataclasses.replace(policy, timeout_s=server.external_timeout_s)
        with external_server(server.base_url.rstrip("/"), bounded) as running:
            yield running
        return
    if server.port:  # a port we chose is free by construction; one the user chose may not be
        check_port_free(server.host, plan.port)
    base_url = f"http://{server.host}:{plan.port}"
    with managed_server(
        argv,
        server_env(server, plan.env),
        base_url,
        server_log_path(cell_dir),
        policy,
        server.stop_grace_s,
    ) as running:
        yield running


def _finish(result: ResultDraft, conf: RootConf, cell_dir: Path, clock: float) -> CellResult:
    from pipeline.cell.provenance import now_iso

    result.set_ended(now_iso())
    mark(result, "end", clock)
    result.set_overhead(overhead(result.marks))
    secrets = secrets_of(conf.client)
    if secrets:
        result.redact_error(lambda text: redact_text(text, secrets))
    if secrets and cell_dir.exists():
        redact_tree(cell_dir, secrets)  # SGLang prints its server_args, api_key included
    written = write_result(cell_dir, result.to_json())
    # Also when node 0 never started.
    _release_other_nodes(conf.cluster.nodes, cell_dir, result.status)
    return written


def _release_other_nodes(nodes: int, cell_dir: Path, why: str) -> None:
    # The other nodes of a multi-node cell stop their launchers once this marker exists. It
    # must come before node 0's server stops: live, node 1's SGLang died 7 s before a marker
    # written after the stop, and was recorded as failed.
    if nodes > 1 and cell_dir.is_dir():
        (cell_dir / DONE_MARKER).write_text(why + "\n")
