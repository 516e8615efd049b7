from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from backends.backend_conf import GpuConf
from backends.gpu import (
    GpuDetectionError,
    GpuInfo,
    detect_gpu,
    family_of,
    parse_compute_capability,
    parse_nvidia_smi_csv,
)

H200_NOHEADER = "NVIDIA H200, 9.0, 580.159.04, 143771\n"
H200_HEADER_UNITS = (
    "name, compute_cap, driver_version, memory.total [MiB]\n"
    "NVIDIA H200, 9.0, 580.159.04, 143771 MiB\n"
    "NVIDIA H200, 9.0, 580.159.04, 143771 MiB\n"
)
B200_X8 = "".join("NVIDIA B200, 10.0, 580.65.06, 183359\n" for _ in range(8))
RTX_PRO = "NVIDIA RTX PRO 6000 Blackwell Server Edition, 12.0, 580.82.07, [N/A]\n"
GB10 = "NVIDIA GB10, 12.1, 580.95.05, [N/A]\n"


@pytest.mark.parametrize(
    ("text", "name", "sm", "family", "count", "memory"),
    [
        (H200_NOHEADER, "NVIDIA H200", 90, "SM90", 1, 143771),
        (H200_HEADER_UNITS, "NVIDIA H200", 90, "SM90", 2, 143771),
        (B200_X8, "NVIDIA B200", 100, "SM100", 8, 183359),
        (RTX_PRO, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120, "SM120", 1, 0),
        (GB10, "NVIDIA GB10", 121, "SM120", 1, 0),
        (
            "NVIDIA A100-SXM4-80GB, 8.0, 535.54.03, 81920\n",
            "NVIDIA A100-SXM4-80GB",
            80,
            "SM80",
            1,
            81920,
        ),
        ("NVIDIA L40S, 8.9, 550.54.15, 46068\n", "NVIDIA L40S", 89, "SM89", 1, 46068),
    ],
)
def test_parse_nvidia_smi_csv(
    text: str, name: str, sm: int, family: str, count: int, memory: int
) -> None:
    info = parse_nvidia_smi_csv(text)
    assert (info.name, info.sm, info.family, info.count, info.memory_mib) == (
        name,
        sm,
        family,
        count,
        memory,
    )
    assert info.source == "nvidia-smi"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "name, compute_cap, driver_version, memory.total [MiB]\n",
        "H200, 9.0\n",
        "X, nine, 1, 2\n",
    ],
)
def test_parse_nvidia_smi_csv_rejects_garbage(text: str) -> None:
    with pytest.raises(GpuDetectionError):
        parse_nvidia_smi_csv(text)


@pytest.mark.parametrize(
    ("cap", "sm", "family"),
    [
        ("8.0", 80, "SM80"),
        ("8.6", 86, "SM86"),
        ("9.0", 90, "SM90"),
        ("10.0", 100, "SM100"),
        ("10.3", 103, "SM103"),
        ("12.0", 120, "SM120"),
        ("12.1", 121, "SM120"),
        ("7.5", 75, "unknown"),
    ],
)
def test_capability_and_family(cap: str, sm: int, family: str) -> None:
    assert parse_compute_capability(cap) == sm
    assert family_of(sm) == family


def test_config_override_wins_over_detection() -> None:
    conf = GpuConf(
        detect=False, name="NVIDIA B200", compute_capability="10.0", count=8, memory_mib=183359
    )
    assert detect_gpu(conf) == GpuInfo(
        name="NVIDIA B200",
        compute_capability="10.0",
        sm=100,
        family="SM100",
        count=8,
        memory_mib=183359,
        driver_version="",
        source="config",
    )


def test_config_override_with_bad_capability_names_the_key() -> None:
    with pytest.raises(GpuDetectionError, match=r"gpu\.compute_capability"):
        detect_gpu(GpuConf(detect=False, compute_capability="hopper"))


def _fake_nvidia_smi(tmp_path: Path, stdout: str, rc: int = 0) -> str:
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{stdout}EOF\nexit {rc}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_detect_runs_nvidia_smi_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "PATH", _fake_nvidia_smi(tmp_path, H200_HEADER_UNITS) + os.pathsep + os.environ["PATH"]
    )
    info = detect_gpu(GpuConf())
    assert (info.source, info.family, info.count) == ("nvidia-smi", "SM90", 2)


def test_detect_falls_back_when_nvidia_smi_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_nvidia_smi(tmp_path, "NVIDIA-SMI has failed\n", rc=9))
    info = detect_gpu(GpuConf())
    # No torch with CUDA on the test machines that lack nvidia-smi: nothing is found.
    assert info.source in {"torch", "none"}
    if info.source == "none":
        assert (info.sm, info.family, info.count) == (0, "unknown", 0)
