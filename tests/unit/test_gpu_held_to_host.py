"""A ``gpu=...`` set by hand, held to the GPU of the host that starts the server (pure)."""

from __future__ import annotations

import dataclasses

import pytest

from backends.gpu import GpuInfo
from backends.gpu_confirmation import detected_here, held_to_host

H200 = GpuInfo("NVIDIA H200", "9.0", 90, "SM90", 1, 143771, "", "config")
NONE = GpuInfo("none", "0.0", 0, "unknown", 0, 0, "", "none")


def found(name: str, capability: str, sm: int, family: str, source: str = "nvidia-smi") -> GpuInfo:
    return GpuInfo(name, capability, sm, family, 8, 81559, "580.65.06", source)


@pytest.mark.parametrize(
    ("host", "source"),
    [
        (NONE, "config"),  # nothing found here: the config's word, still unverified
        (found("NVIDIA H200", "9.0", 90, "SM90"), "config+nvidia-smi"),
        (found("NVIDIA H100 80GB HBM3", "9.0", 90, "SM90"), "config+nvidia-smi"),  # same kernels
        (found("NVIDIA H200", "9.0", 90, "SM90", source="torch"), "config+torch"),
    ],
)
def test_a_host_of_the_planned_family_confirms_it(host: GpuInfo, source: str) -> None:
    held = held_to_host(H200, host)
    assert held == dataclasses.replace(H200, source=source)  # the config's name and figures kept
    assert detected_here(held) is (host.source != "none")


def test_a_host_of_another_family_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError) as err:
        held_to_host(H200, found("NVIDIA B200", "10.0", 100, "SM100"))
    assert str(err.value) == (
        "gpu: the config plans for NVIDIA H200 (SM90), but this host, which starts the server, "
        "has NVIDIA B200 (SM100): set gpu=auto to plan for it, or the gpu=... of this host "
        "(conf/gpu/); dry_run=true plans for any GPU"
    )


@pytest.mark.parametrize(
    ("source", "here"),
    [("nvidia-smi", True), ("torch", True), ("config", False), ("none", False),
     ("config+nvidia-smi", True)],
)  # fmt: skip
def test_detected_here(source: str, here: bool) -> None:
    assert detected_here(dataclasses.replace(H200, source=source)) is here
