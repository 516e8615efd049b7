"""Give each cell of a parallel sweep, or each node of a cell, its own GPUs on a multi-GPU host.

With ``server.gpus=auto`` a job takes the ``tp`` GPUs of slot ``job_num % (visible // tp)``: on
8 GPUs, 8 TP-1 cells or 2 TP-4 cells run side by side without sharing a device. A node of a
multi-node cell takes the ``tp / nodes`` GPUs of its place on its host instead (``node_devices``).
Only the server's environment gets ``CUDA_VISIBLE_DEVICES``; the pipeline process is untouched.
"""

from __future__ import annotations

from collections.abc import Mapping


def visible_devices(env: Mapping[str, str], gpu_count: int) -> list[str]:
    """The devices this process may use: ``CUDA_VISIBLE_DEVICES`` if set, else all."""
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is not None and listed.strip():
        return [d.strip() for d in listed.split(",") if d.strip()]
    return [str(i) for i in range(gpu_count)]


def cell_devices(job_num: int, tp: int, visible: list[str]) -> list[str]:
    """The ``tp`` devices of a job's slot.

    Raises:
        ValueError: fewer devices are visible than the model's tensor-parallel size.
    """
    if tp < 1:
        raise ValueError(f"model.tp must be at least 1, got {tp}")
    slots = len(visible) // tp
    if slots == 0:
        raise ValueError(
            f"model.tp={tp} needs {tp} GPUs but {len(visible)} are visible "
            f"({','.join(visible) or 'none'}); set server.gpus to a list or free some GPUs"
        )
    slot = job_num % slots
    return visible[slot * tp : (slot + 1) * tp]


def node_devices(local_rank: int, per_node: int, visible: list[str]) -> list[str]:
    """The GPUs of a multi-node cell's node: slice ``local_rank`` of its host's visible GPUs.

    On a cluster every node is alone on its host (slice 0); nodes that share a host (two SGLang
    nodes on one machine) take consecutive slices, never the same GPU.

    Raises:
        ValueError: the host has too few visible GPUs for this node's slice.
    """
    first = local_rank * per_node
    if first + per_node > len(visible):
        raise ValueError(
            f"node {local_rank} on this host needs GPUs {first}..{first + per_node - 1} "
            f"(model.tp / cluster.nodes = {per_node} each) but {len(visible)} are visible "
            f"({','.join(visible) or 'none'})"
        )
    return visible[first : first + per_node]


def server_devices(
    setting: str | None,
    job_num: int,
    tp: int,
    env: Mapping[str, str],
    gpu_count: int,
    node: tuple[int, int] | None = None,
) -> str | None:
    """``CUDA_VISIBLE_DEVICES`` for a cell's server, or None to inherit the pipeline's.

    Args:
        setting: ``server.gpus``: None (inherit), ``auto`` (slot by job number) or ``"0,1"``.
        job_num: Hydra's job number in the sweep (0 for a single run).
        tp: the model's tensor-parallel size.
        env: the pipeline's environment.
        gpu_count: GPUs detected on the host.
        node: ``(local rank, GPUs per node)`` for a node of a multi-node cell, else None.
    """
    if setting is None:
        return None
    if setting != "auto":
        return setting
    visible = visible_devices(env, gpu_count)
    if node is not None:
        return ",".join(node_devices(node[0], node[1], visible))
    return ",".join(cell_devices(job_num, tp, visible))


def gpus_setting(setting: str | None, server_sees_env: bool, env: Mapping[str, str]) -> str | None:
    """``server.gpus`` as the cell applies it: unset becomes ``auto`` where inheriting means no GPU.

    submitit's local executor (``hydra/launcher=local``) sets ``CUDA_VISIBLE_DEVICES`` to ``""``
    in every job given no GPUs (``cluster.local_gpus_per_cell=0``), and to the same first GPUs in
    every job otherwise. A GPU server that inherited ``""`` would see no GPU, so there the cell
    gives it its own GPUs by job number, as ``server.gpus=auto`` does.

    Args:
        setting: ``server.gpus`` as configured.
        server_sees_env: the server is a process on this host that reads our environment.
        env: the pipeline's environment.
    """
    if setting is None and server_sees_env and env.get("CUDA_VISIBLE_DEVICES") == "":
        return "auto"
    return setting
