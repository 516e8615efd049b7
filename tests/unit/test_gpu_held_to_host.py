"""A ``gpu=...`` set by hand, held to the GPU of the host that starts the server (pure)."""

from __future__ import annotations

import dataclasses

import pytest

from backends.backend_conf import GpuConf
from backends.gpu import GpuInfo
from backends.gpu_confirmation import detected_here, held_to_host, substituted_part

H200 = GpuInfo("NVIDIA H200", "9.0", 90, "SM90", 1, 143771, "", "config")
NONE = GpuInfo("none", "0.0", 0, "unknown", 0, 0, "", "none")


def found(name: str, capability: str, sm: int, family: str, source: str = "nvidia-smi") -> GpuInfo:
    return GpuInfo(name, capability, sm, family, 8, 81559, "580.65.06", source)


@pytest.mark.parametrize(
    ("host", "source"),
    [
        (found("NVIDIA H200", "9.0", 90, "SM90"), "config+nvidia-smi"),
        (found("NVIDIA H100 80GB HBM3", "9.0", 90, "SM90"), "config+nvidia-smi"),  # same kernels
        (found("NVIDIA H200", "9.0", 90, "SM90", source="torch"), "config+torch"),
    ],
)
def test_a_host_of_the_planned_family_confirms_it_as_itself(host: GpuInfo, source: str) -> None:
    held = held_to_host(H200, host)
    # The part it ran on (name, memory, driver), the planned count: an H100 stays an H100.
    assert held == dataclasses.replace(host, count=H200.count, source=source)
    assert detected_here(held)


def test_a_host_without_a_gpu_keeps_the_configs_word_unverified() -> None:
    assert held_to_host(H200, NONE) == H200 and not detected_here(H200)


ASKED = GpuConf(detect=False, name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)


@pytest.mark.parametrize(
    ("asked", "held", "warning"),
    [
        (ASKED, held_to_host(H200, found("NVIDIA H100 80GB HBM3", "9.0", 90, "SM90")),
         "gpu: the config names NVIDIA H200; this host has NVIDIA H100 80GB HBM3 (SM90: the same "
         "kernels and pre-flight rules), and the cell records the host's GPU"),
        (ASKED, held_to_host(H200, found("NVIDIA H200", "9.0", 90, "SM90")), None),
        (ASKED, H200, None),  # nothing detected: the unverified GPU says so elsewhere
        (GpuConf(), found("NVIDIA H100 80GB HBM3", "9.0", 90, "SM90"), None),  # gpu=auto
    ],
)  # fmt: skip
def test_a_substituted_part_is_a_warning(asked: GpuConf, held: GpuInfo, warning: str | None):
    assert substituted_part(asked, held) == warning


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
