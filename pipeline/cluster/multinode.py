"""Multi-node SGLang: one cell spread over ``cluster.nodes`` nodes.

SGLang runs one launcher per node with ``--nnodes N --node-rank R --dist-init-addr HOST:PORT``;
node 0 serves HTTP. A submitit launcher starts the cell job once per node: under SLURM one task
on each of N nodes (``hydra/launcher=slurm``), or N tasks on this host (``hydra/launcher=local``,
each with its own GPUs through ``server.gpus=auto``). Rank 0 runs the evals against its own
server; the other ranks only run their SGLang launcher and stop it when rank 0 writes
``NODE0_DONE`` into the shared cell folder.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.results.result_types import NodeResult

DONE_MARKER = "NODE0_DONE"
DIST_INIT_PORT = 20000  # the default of cluster.dist_init_port: node 0's rendezvous, not HTTP
LOCAL_HOST = "127.0.0.1"  # node 0 of a multi-node cell whose nodes share this host


@dataclass(frozen=True)
class NodePlan:
    """This process's place in a multi-node cell."""

    nnodes: int
    node_rank: int
    dist_init_addr: str
    local_rank: int = 0  # this node's place among the nodes on its host (picks its GPUs)

    @property
    def serves_evals(self) -> bool:
        """Only node 0 serves HTTP and runs the evals."""
        return self.node_rank == 0

    def args(self) -> list[str]:
        """SGLang's multi-node flags for this node."""
        return [
            "--nnodes",
            str(self.nnodes),
            "--node-rank",
            str(self.node_rank),
            "--dist-init-addr",
            self.dist_init_addr,
        ]


def first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``gpu[03-04,07],cpu1`` -> ``gpu03``.

    Raises:
        ValueError: the list is empty or not in SLURM's compressed form.
    """
    head = re.match(r"\s*([^,\[\s]+)(\[([^\]]+)\])?", nodelist or "")
    if head is None:
        raise ValueError(f"SLURM_JOB_NODELIST={nodelist!r}: expected e.g. gpu[03-04] or a,b")
    prefix, ranges = head.group(1), head.group(3)
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def node_plan(nodes: int, env: Mapping[str, str], port: int = DIST_INIT_PORT) -> NodePlan | None:
    """The node plan for ``cluster.nodes``, None for a single-node cell.

    One task per SGLang node: the rank and task count come from SLURM (``SLURM_PROCID``,
    ``SLURM_NTASKS``) or from submitit's local executor (``SUBMITIT_LOCAL_GLOBALID``,
    ``SUBMITIT_LOCAL_NTASKS``), so the plan is the same whether the tasks sit on N machines or
    share one. Nodes on one host meet at ``127.0.0.1``.

    Raises:
        ValueError: several nodes were asked for outside a job with that many tasks.
    """
    if nodes <= 1:
        return None
    tasks = _tasks(env)
    if tasks is None or tasks[0] != nodes:
        raise ValueError(
            f"cluster.nodes={nodes} needs a job of {nodes} tasks, one per node "
            "(hydra/launcher=slurm, or hydra/launcher=local for nodes on this host); this "
            f"process sees SLURM_NTASKS={env.get('SLURM_NTASKS')!r}, "
            f"SUBMITIT_LOCAL_NTASKS={env.get('SUBMITIT_LOCAL_NTASKS')!r}"
        )
    _, rank, local_rank, host = tasks
    host = host or first_host(env.get("SLURM_JOB_NODELIST", ""))
    return NodePlan(nodes, rank, f"{host}:{port}", local_rank)


def _tasks(env: Mapping[str, str]) -> tuple[int, int, int, str] | None:
    # (task count, rank, rank on this host, node 0's host or "": SLURM's first node)
    if env.get("SUBMITIT_EXECUTOR") == "local" and "SUBMITIT_LOCAL_GLOBALID" in env:
        return (
            int(env.get("SUBMITIT_LOCAL_NTASKS") or 0),
            int(env["SUBMITIT_LOCAL_GLOBALID"]),
            int(env.get("SUBMITIT_LOCAL_LOCALID") or 0),
            LOCAL_HOST,
        )
    if "SLURM_PROCID" in env:
        return (
            int(env.get("SLURM_NTASKS") or 0),
            int(env["SLURM_PROCID"]),
            int(env.get("SLURM_LOCALID") or 0),
            "",
        )
    return None


def serve_as_worker(
    argv: list[str],
    env: dict[str, str],
    cell_dir: Path,
    rank: int,
    grace_s: float,
    poll_s: float = 5.0,
) -> NodeResult:
    """Run a non-zero rank's SGLang launcher until node 0 is done (or it exits by itself).

    Returns:
        What happened, for ``node-<rank>/result.json``.
    """
    from pipeline.cluster.slurm_job import job_facts
    from pipeline.results.cell_paths import node_dir, server_log_path
    from pipeline.results.redact import redact_argv
    from pipeline.serving.server import launch, stop, tail

    log = server_log_path(node_dir(cell_dir, rank))
    process = launch(argv, env, log)
    try:
        while process.poll() is None and not (cell_dir / DONE_MARKER).exists():
            time.sleep(poll_s)
    finally:
        stop(process, grace_s)
    exited_first = not (cell_dir / DONE_MARKER).exists()
    return NodeResult(
        rank,
        "failed" if exited_first else "ok",
        process.returncode,
        tuple(redact_argv(argv)),
        job_facts(os.environ),  # this node's task of the cell's job
        tail(log) if exited_first else "",
        env.get("CUDA_VISIBLE_DEVICES"),
    )
