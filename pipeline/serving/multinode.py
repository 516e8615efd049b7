"""Multi-node SGLang under SLURM: one cell spread over ``cluster.nodes`` nodes.

SGLang runs one launcher per node with ``--nnodes N --node-rank R --dist-init-addr HOST:PORT``;
node 0 serves HTTP. The submitit launcher starts the cell job once per node (``nodes: N``,
``tasks_per_node: 1``): rank 0 runs the evals against its own server, the other ranks only run
their SGLang launcher and stop it when rank 0 writes ``NODE0_DONE`` into the shared cell folder.
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
DIST_INIT_PORT = 20000  # SGLang's rendezvous port on node 0 (not the HTTP port)


@dataclass(frozen=True)
class NodePlan:
    """This process's place in a multi-node cell."""

    nnodes: int
    node_rank: int
    dist_init_addr: str

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


def node_plan(nodes: int, env: Mapping[str, str]) -> NodePlan | None:
    """The node plan for ``cluster.nodes`` under SLURM, None for a single-node cell.

    One SLURM task per SGLang node (``tasks_per_node: 1``): the rank is the task's
    ``SLURM_PROCID`` and the node count ``SLURM_NTASKS``, so the plan is the same whether the
    tasks sit on N machines or, as in the single-node test SLURM, N tasks share one.

    Raises:
        ValueError: several nodes were asked for outside a SLURM job with that many tasks.
    """
    if nodes <= 1:
        return None
    tasks = int(env.get("SLURM_NTASKS", "0") or 0)
    if tasks != nodes or "SLURM_PROCID" not in env:
        raise ValueError(
            f"cluster.nodes={nodes} needs a SLURM job of {nodes} tasks, one per node "
            f"(hydra/launcher=slurm); this process sees SLURM_NTASKS={env.get('SLURM_NTASKS')!r}"
        )
    host = first_host(env.get("SLURM_JOB_NODELIST", ""))
    return NodePlan(nodes, int(env["SLURM_PROCID"]), f"{host}:{DIST_INIT_PORT}")


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
    from pipeline.results.cell_paths import node_dir, server_log_path
    from pipeline.results.redact import redact_argv
    from pipeline.serving.server import launch, stop, tail
    from pipeline.serving.slurm_job import job_facts

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
    )
