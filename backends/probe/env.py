"""Whether this machine can run the probe: torch with CUDA, an SM the kernels support, FlashInfer.

Everything is imported inside ``gpu_environment`` so that importing this module is free.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field

# fmha_v2 prefill runs on SM90 (and SM120 without fp8 or skip-softmax); FA3 on SM80/SM90.
KERNEL_SMS = {"fmha_v2": (90,), "fa3": (80, 90)}


@dataclass
class Environment:
    """What the probe found; ``problem`` is None when it can run."""

    problem: str | None = None
    gpu: str = ""
    sm: int = 0
    versions: dict[str, str] = field(default_factory=dict)

    def kernels_here(self, wanted: tuple[str, ...]) -> list[str]:
        """The kernels of ``wanted`` that this GPU runs."""
        return [k for k in wanted if self.sm in KERNEL_SMS.get(k, ())]


def gpu_environment() -> Environment:
    """Look for torch, a CUDA GPU and FlashInfer, in that order, without failing."""
    env = Environment()
    try:
        torch = importlib.import_module("torch")
    except ImportError as exc:
        env.problem = f"torch is not installed ({exc})"
        return env
    env.versions["torch"] = torch.__version__
    env.versions["torch_cuda"] = str(torch.version.cuda)
    if not torch.cuda.is_available():
        env.problem = "torch sees no CUDA GPU (torch.cuda.is_available() is False)"
        return env
    major, minor = torch.cuda.get_device_capability(0)
    env.gpu, env.sm = torch.cuda.get_device_name(0), major * 10 + minor
    try:
        env.versions["flashinfer"] = importlib.import_module("flashinfer").__version__
    except Exception as exc:  # its import can raise anything, e.g. an AssertionError
        env.problem = f"flashinfer cannot be imported ({type(exc).__name__}: {exc})"
    env.versions["FLASHINFER_WORKSPACE_BASE"] = os.environ.get("FLASHINFER_WORKSPACE_BASE", "")
    return env


NO_GPU_HELP = (
    "mtp-eval-probe runs FlashInfer kernels on a local NVIDIA GPU (SM90 for fmha_v2 and FA3) and "
    "needs torch with CUDA and flashinfer-python 0.6.18 (pip install 'mtp-eval[gpu]'); "
    "benchmarks/kernel_probe/README.md says how to run it on a GPU host."
)
