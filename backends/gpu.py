"""GPU detection: which NVIDIA part (and so which SM family rules) a cell is planned for.

Detection order: the config override (``gpu.detect: false``), ``nvidia-smi``, torch (only when it is
already installed and sees CUDA), else an empty ``GpuInfo`` with source ``none``. The family name
decides which compatibility rules and kernels apply (``backends.variants``, ``backends.compat``).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from backends.backend_conf import GpuConf

NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    "--query-gpu=name,compute_cap,driver_version,memory.total",
    "--format=csv,noheader,nounits",
)

# SM121 (GB10) follows SGLang's SM120 rules: its predicates test the major version only.
_FAMILY_OF_SM = {
    80: "SM80",
    86: "SM86",
    89: "SM89",
    90: "SM90",
    100: "SM100",
    103: "SM103",
    120: "SM120",
    121: "SM120",
}
FAMILIES = ("SM80", "SM86", "SM89", "SM90", "SM100", "SM103", "SM120")
UNKNOWN_FAMILY = "unknown"


@dataclass(frozen=True)
class GpuInfo:
    """The GPU a cell runs on (or is planned for)."""

    name: str
    compute_capability: str  # "9.0"
    sm: int  # 90
    family: str  # "SM90"; "unknown" when no rule set applies
    count: int
    memory_mib: int
    driver_version: str
    source: str  # nvidia-smi | torch | config | none


class GpuDetectionError(ValueError):
    """Raised when a GPU description (nvidia-smi output or config) cannot be understood."""


def parse_compute_capability(text: str) -> int:
    """Turn ``"9.0"`` into 90 and ``"12.1"`` into 121.

    Args:
        text: Compute capability as ``MAJOR.MINOR``.

    Returns:
        The SM number.

    Raises:
        GpuDetectionError: If the text is not ``MAJOR.MINOR``.
    """
    match = re.fullmatch(r"\s*(\d+)\.(\d)\s*", text)
    if match is None:
        raise GpuDetectionError(
            f"compute capability {text!r} is not MAJOR.MINOR (e.g. '9.0'); "
            "fix gpu.compute_capability or the nvidia-smi output"
        )
    return int(match.group(1)) * 10 + int(match.group(2))


def family_of(sm: int) -> str:
    """Family name whose rules apply to an SM number (SM121 -> SM120, unknown parts -> unknown)."""
    return _FAMILY_OF_SM.get(sm, UNKNOWN_FAMILY)


def _int_or_zero(text: str) -> int:
    # nvidia-smi prints "[N/A]" for fields a part or driver does not report.
    match = re.match(r"\s*(\d+)", text)
    return int(match.group(1)) if match else 0


def parse_nvidia_smi_csv(text: str) -> GpuInfo:
    """Parse ``nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total`` CSV output.

    Accepts the output with or without a header line and with or without units (``143771 MiB``).
    The first GPU describes the part; ``count`` is the number of GPUs listed.

    Args:
        text: The command's stdout.

    Returns:
        The parsed GPU, source ``nvidia-smi``.

    Raises:
        GpuDetectionError: If no GPU row can be read.
    """
    rows = [row for row in csv.reader(io.StringIO(text), skipinitialspace=True) if row]
    rows = [row for row in rows if not row[0].strip().lower().startswith("name")]
    if not rows:
        raise GpuDetectionError(f"nvidia-smi listed no GPU: {text.strip()[:200]!r}")
    first = [field.strip() for field in rows[0]]
    if len(first) != 4:
        raise GpuDetectionError(
            f"nvidia-smi row {rows[0]!r} has {len(first)} fields; expected "
            "name, compute_cap, driver_version, memory.total"
        )
    name, capability, driver, memory = first
    sm = parse_compute_capability(capability)
    return GpuInfo(
        name=name,
        compute_capability=capability,
        sm=sm,
        family=family_of(sm),
        count=len(rows),
        memory_mib=_int_or_zero(memory),
        driver_version=driver,
        source="nvidia-smi",
    )


def gpu_from_config(conf: GpuConf) -> GpuInfo:
    """The GPU described by the config (``gpu.detect: false``), to plan for another part."""
    sm = parse_compute_capability(conf.compute_capability)
    return GpuInfo(
        name=conf.name,
        compute_capability=conf.compute_capability.strip(),
        sm=sm,
        family=family_of(sm),
        count=conf.count,
        memory_mib=conf.memory_mib,
        driver_version=conf.driver_version,
        source="config",
    )


NO_GPU = GpuInfo(
    name="none",
    compute_capability="0.0",
    sm=0,
    family=UNKNOWN_FAMILY,
    count=0,
    memory_mib=0,
    driver_version="",
    source="none",
)


def _from_nvidia_smi() -> GpuInfo | None:
    if shutil.which(NVIDIA_SMI_QUERY[0]) is None:
        return None
    try:
        done = subprocess.run(
            list(NVIDIA_SMI_QUERY), capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    try:
        return parse_nvidia_smi_csv(done.stdout)
    except GpuDetectionError:
        return None


def _nvidia_driver_loaded() -> bool:
    return os.path.exists("/proc/driver/nvidia") or os.path.exists("/dev/nvidia0")


def _from_torch() -> GpuInfo | None:
    # torch is heavy (2 s to import) and not a base dependency: use it only when it is installed
    # and an NVIDIA driver is loaded, since without one it cannot see a GPU either.
    if importlib.util.find_spec("torch") is None or not _nvidia_driver_loaded():
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    sm = props.major * 10 + props.minor
    return GpuInfo(
        name=str(props.name),
        compute_capability=f"{props.major}.{props.minor}",
        sm=sm,
        family=family_of(sm),
        count=torch.cuda.device_count(),
        memory_mib=int(props.total_memory) // (1024 * 1024),
        driver_version="",
        source="torch",
    )


def detect_gpu(conf: GpuConf) -> GpuInfo:
    """Find the GPU to plan for.

    Args:
        conf: The ``gpu`` config node; ``detect: false`` uses its fields instead of detection.

    Returns:
        The GPU; source ``none`` (sm 0, family ``unknown``) when nothing was found.
    """
    if not conf.detect:
        return gpu_from_config(conf)
    return _from_nvidia_smi() or _from_torch() or NO_GPU
