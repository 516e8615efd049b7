"""A GPU the server cannot confirm, and the kernel choices that rest on it (pure).

SGLang's ``/server_info`` reports ``device: cuda`` and no GPU name or compute capability, so the
GPU of a cell is known only where this host detected it and started the server on it (a
``gpu=...`` that names a part is then held to the GPU found here: ``held_to_host``). Elsewhere
(``server=external``, or a host that finds no GPU) it is what the config says: the GPU and each
phase whose kernel would differ on another GPU family are *unverified*, listed and shown as the
other unverified settings are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from backends.backend_conf import GpuConf
from backends.gpu import FAMILIES, GpuInfo
from backends.verify import Mismatch

GPU_KEY = "gpu"
RUNS_PREFIX = "runs."


def unconfirmed_gpu(
    gpu: GpuInfo,
    runs: Mapping[str, str],
    runs_on: Callable[[str], Mapping[str, str] | None],
) -> list[Mismatch]:
    """The GPU and the GPU-dependent phases as unverifiable requests.

    Args:
        gpu: the GPU the cell was planned for (the server cannot confirm it).
        runs: the kernels that run per phase, as worked out for ``gpu``.
        runs_on: the kernels per phase for another GPU family (None: cannot be worked out, so
            every phase is taken to depend on the GPU).

    Returns:
        ``gpu`` first, then ``runs.<phase>`` for each phase whose kernel differs on some family.
    """
    others = [runs_on(family) for family in FAMILIES if family != gpu.family]
    depends = [
        phase
        for phase, chosen in runs.items()
        if any(other is None or other.get(phase) != chosen for other in others)
    ]
    found = [Mismatch(GPU_KEY, f"{gpu.name} ({gpu.family})", None, verifiable=False)]
    return found + [
        Mismatch(RUNS_PREFIX + phase, runs[phase], None, verifiable=False) for phase in depends
    ]


def unconfirmed_reason(mismatch: Mismatch) -> str | None:
    """Why the GPU or a kernel resting on it is unverified (None: another kind of key)."""
    if mismatch.key == GPU_KEY:
        return (
            "the server does not report its GPU (/server_info says only device=cuda) and this "
            "host did not detect it for a server it started: it is the one gpu=... names"
        )
    if mismatch.key.startswith(RUNS_PREFIX):
        return "the kernel chosen for the GPU gpu=... names, which the server does not confirm"
    return None


def held_to_host(planned: GpuInfo, host: GpuInfo) -> GpuInfo:
    """A ``gpu=...`` set by hand, on the host that starts the server: held to the GPU found there.

    Args:
        planned: the GPU the config names (source ``config``).
        host: what this host detected (source ``none`` where it found nothing).

    Returns:
        The host's GPU (its name, memory, driver) with the planned count and the confirmation in
        its source (``config+nvidia-smi``), so the cell records the part it ran on: an H100 under
        ``gpu=h200`` is an H100 in the results, not an H200; ``planned`` as it is when the host
        found no GPU.

    Raises:
        ValueError: the host's GPU is of another family: its kernels and pre-flight rules are
            not the ones planned.
    """
    if host.source == "none":
        return planned
    if host.family != planned.family:
        raise ValueError(
            f"gpu: the config plans for {planned.name} ({planned.family}), but this host, which "
            f"starts the server, has {host.name} ({host.family}): set gpu=auto to plan for it, "
            "or the gpu=... of this host (conf/gpu/); dry_run=true plans for any GPU"
        )
    return dataclasses.replace(host, count=planned.count, source=f"{planned.source}+{host.source}")


def substituted_part(asked: GpuConf, held: GpuInfo) -> str | None:
    """The warning when the host confirmed another part than ``gpu=...`` names (None: the same).

    ``gpu=auto`` names no part: nothing to warn of.
    """
    if asked.detect or not detected_here(held) or held.name == asked.name:
        return None
    return (
        f"gpu: the config names {asked.name}; this host has {held.name} ({held.family}: the "
        "same kernels and pre-flight rules), and the cell records the host's GPU"
    )


def detected_here(gpu: GpuInfo) -> bool:
    """Whether this host detected the GPU, or confirmed the one the config names."""
    return gpu.source.rsplit("+", 1)[-1] in ("nvidia-smi", "torch")
