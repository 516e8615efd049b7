"""How a cell's server starts, planned before anything runs: pre-flight, GPUs, nodes, argv.

``preflight_cell`` builds the cell's ``CellSpec`` on the GPU it will run on and records what
SGLang's rules say of it; ``plan_cell_launch`` turns it into the command, environment and node
flags the server starts with; ``started_server`` starts (or reaches) that server for a ``with``
block. Each reads its part of the ``CellPlan``, never the config.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from backends.compat import Finding, preflight
from backends.gpu import GpuInfo
from backends.gpu_confirmation import substituted_part
from backends.launch import LaunchPlan, plan_launch
from backends.options import LaunchOptions
from backends.resolved import CellSpec
from backends.rule import FATAL
from evals.base import Eval
from pipeline.cell.cell_plan import CellPlan
from pipeline.cell.cell_result import record_plan
from pipeline.cell.guards import check_port_free
from pipeline.cell.outcomes import unsupported
from pipeline.cluster.gpu_slots import gpus_setting, server_devices
from pipeline.cluster.multinode import NodePlan, node_plan
from pipeline.config.schema import gpus_per_node
from pipeline.results.cell_error import CellError
from pipeline.results.cell_paths import server_log_path
from pipeline.results.nested_schema import FindingJson
from pipeline.results.result_draft import ResultDraft
from pipeline.serving import jit_cache, prestart_pool
from pipeline.serving.keys import secrets_of
from pipeline.serving.server import (
    HealthPolicy,
    RunningServer,
    external_server,
    free_port,
    managed_server,
)
from pipeline.serving.server_checks import check_label_before_launch, plan_gpu
from pipeline.serving.server_command import server_argv, server_env
from pipeline.serving.server_kind import ServerPlan
from pipeline.serving.sglang_release import sglang_version


@dataclass(frozen=True)
class PlannedLaunch:
    """The cell's server as planned: what the later steps start, verify and record."""

    plan: LaunchPlan  # SGLang's arguments, environment, port and what /server_info must say
    argv: list[str]  # the whole command ([] for a server the pipeline does not start)
    gpu: GpuInfo  # the GPU the cell runs on
    node: NodePlan | None  # this process's node of a multi-node cell (None: one node)
    cache: Path | None  # the server's JIT cache folder (None: its own defaults)


def preflight_cell(cell: CellPlan, result: ResultDraft) -> CellSpec | None:
    """The cell on the GPU it runs on, its pre-flight on ``result``; None when it is refused.

    A refused cell is marked ``unsupported`` with SGLang's own messages.
    """
    launch = cell.launch
    gpu = plan_gpu(launch.gpu, cell.server, launch.client.api_key, launch.dry_run)
    version = sglang_version(cell.server, launch.client.api_key)
    options = _with_free_port(launch.options)
    spec = CellSpec(
        launch.model, launch.backend, launch.kv_dtype, launch.skip_softmax, gpu, version, options
    )
    findings = preflight(spec)
    result.set_preflight([finding_json(f) for f in findings])
    result.warnings.extend(f"{f.outcome}: {f.text}" for f in findings if f.outcome not in FATAL)
    result.set_platform(dataclasses.asdict(gpu), version)
    substituted = substituted_part(launch.gpu, gpu)
    if substituted is not None:
        result.warnings.append(substituted)
    blocking = [f for f in findings if f.outcome in FATAL]
    if blocking:
        unsupported(result, blocking)
        return None
    return spec


def _with_free_port(options: LaunchOptions) -> LaunchOptions:
    # Port 0: the pipeline starts the server and the user left server.port unset.
    if options.port:
        return options
    return dataclasses.replace(options, port=free_port(options.host))


def plan_cell_launch(
    cell: CellPlan,
    spec: CellSpec,
    evals: dict[str, Eval],
    cell_dir: Path,
    job_num: int,
    result: ResultDraft,
) -> PlannedLaunch:
    """The command the cell's server starts with, recorded on ``result`` (secrets masked).

    ``job_num``, Hydra's job number in a sweep, picks the GPU slot with ``server.gpus=auto``.

    Raises:
        CellError: kind ``config`` for nodes, tp and visible GPUs that do not fit together, and
            the label check's kinds when SGLang will not run what the variant's name says.
    """
    plan = plan_launch(spec)
    try:
        node = node_plan(cell.launch.nodes, os.environ, cell.launch.dist_init_port)
        plan = _with_devices(cell, plan, spec.gpu, job_num, node)
    except ValueError as err:  # nodes, tp and visible GPUs that do not fit: the user's settings
        raise CellError("config", str(err)) from err
    check_label_before_launch(cell.checks, plan, result)
    cache = _jit_cache(cell.server)
    if cache is not None:
        plan = dataclasses.replace(plan, env={**plan.env, **jit_cache.cache_env(cache)})
    if node is not None:  # one SGLang launcher per node, node 0 serving HTTP
        plan = dataclasses.replace(plan, args=[*plan.args, *node.args()])
    argv = _argv(cell.server, plan, cell_dir, evals)
    record_plan(result, plan, argv, {**plan.env, **cell.server.conf.env})
    return PlannedLaunch(plan, argv, spec.gpu, node, cache)


def _jit_cache(planned: ServerPlan) -> Path | None:
    # Only a server the pipeline starts gets the folder; an external one keeps its own.
    if not planned.kind.launched:
        return None
    return jit_cache.cache_root(planned.conf.jit_cache_dir, os.environ)


def _with_devices(
    cell: CellPlan, plan: LaunchPlan, gpu: GpuInfo, job_num: int, node: NodePlan | None
) -> LaunchPlan:
    tp, kind = cell.launch.model.tp, cell.server.kind
    setting = gpus_setting(cell.server.conf.gpus, kind.gpu_here and not kind.docker, os.environ)
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
def started_server(
    cell: CellPlan, launch: PlannedLaunch, cell_dir: Path
) -> Iterator[RunningServer]:
    """The cell's server for a ``with`` block: started and stopped here, or reached (external).

    Raises:
        CellError: kind ``config`` for ``server=external`` without ``server.base_url``.
    """
    server, policy = cell.server.conf, _health_policy(cell)
    if cell.server.kind.external:
        if not server.base_url:
            raise CellError("config", "server=external needs server.base_url=http://host:port")
        bounded = dataclasses.replace(policy, timeout_s=server.external_timeout_s)
        with external_server(server.base_url.rstrip("/"), bounded) as running:
            yield running
        return
    env = server_env(server, launch.plan.env)
    early = prestart_pool.take(cell_dir, launch.argv, env)  # the same command, started ahead
    if server.port and early is None:  # a port we chose is free by construction
        check_port_free(server.host, launch.plan.port)
    base_url = f"http://{server.host}:{launch.plan.port}"
    log = server_log_path(cell_dir)
    ahead = None if early is None else (early.process, early.started)
    with managed_server(launch.argv, env, base_url, log, policy, server.stop_grace_s, ahead) as up:
        yield up


def _health_policy(cell: CellPlan) -> HealthPolicy:
    server = cell.server.conf
    return HealthPolicy(
        server.startup_timeout_s,
        server.health_poll_initial_s,
        server.health_poll_max_s,
        server.progress_every_s,
        tuple(secrets_of(cell.launch.client)),
    )


def finding_json(f: Finding) -> FindingJson:
    """A pre-flight finding as ``preflight[]`` holds it (in the dataclass's order)."""
    return {"rule": f.rule, "outcome": f.outcome, "message": f.message, "detail": f.detail}
