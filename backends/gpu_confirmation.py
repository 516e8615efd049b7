"""A GPU the server cannot confirm, and the kernel choices that rest on it (pure).

SGLang's ``/server_info`` reports ``device: cuda`` and no GPU name or compute capability, so the
GPU of a cell is known only where this host detected it and started the server on it. Elsewhere
(``server=external``, or a ``gpu=...`` that names a part) it is what the config says: the GPU
and each phase whose kernel would differ on another GPU family are *unverified*, listed and
shown as the other unverified settings are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

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
