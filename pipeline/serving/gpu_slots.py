"""Give each cell of a parallel sweep its own GPUs on a multi-GPU host.

With ``server.gpus=auto`` a job takes the ``tp`` GPUs of slot ``job_num % (visible // tp)``: on
8 GPUs, 8 TP-1 cells or 2 TP-4 cells run side by side without sharing a device. Only the
server's environment gets ``CUDA_VISIBLE_DEVICES``; the pipeline process itself is untouched.
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


def server_devices(
    setting: str | None, job_num: int, tp: int, env: Mapping[str, str], gpu_count: int
) -> str | None:
    """``CUDA_VISIBLE_DEVICES`` for a cell's server, or None to inherit the pipeline's.

    Args:
        setting: ``server.gpus``: None (inherit), ``auto`` (slot by job number) or ``"0,1"``.
        job_num: Hydra's job number in the sweep (0 for a single run).
        tp: the model's tensor-parallel size.
        env: the pipeline's environment.
        gpu_count: GPUs detected on the host.
    """
    if setting is None:
        return None
    if setting != "auto":
        return setting
    return ",".join(cell_devices(job_num, tp, visible_devices(env, gpu_count)))
