"""Real processes: the JIT warm-up children, the CLI without a GPU, and lazy imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends.probe.jit import FAST_FAILURE_S, JitWarmer
from backends.probe.plan import Geometry

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.integration
@pytest.mark.skipif(_cuda(), reason="checks the failure path of a machine without CUDA")
def test_jit_child_failure_is_reported_fast():
    warmer = JitWarmer([("fmha_v2", "bf16"), ("fa3", "bf16")], Geometry(8, 2, 128, 64), 2, 4)
    warmer.start()
    job = warmer.wait("fa3", "bf16", timeout_s=120)
    other = warmer.wait("fmha_v2", "bf16", timeout_s=120)
    warmer.stop()
    assert job is not None and other is not None
    assert (job.state, other.state) == ("failed", "failed")
    assert job.seconds < FAST_FAILURE_S  # so the probe retries such a module in-process
    summary = {(s["kernel"], s["state"]) for s in warmer.summary()}
    assert summary == {("fmha_v2", "failed"), ("fa3", "failed")}
    assert "Error" in warmer.logs() and "==== fa3 bf16: failed" in warmer.logs()
    assert warmer.wait("fa2", "bf16", timeout_s=1) is None


@pytest.mark.integration
@pytest.mark.skipif(_cuda(), reason="on a GPU host this would run the probe")
def test_cli_without_gpu_exits_2_and_says_why(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.probe", f"hydra.run.dir={tmp_path}"],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot run here" in proc.stdout and "GPU" in proc.stdout


@pytest.mark.integration
def test_cli_rejects_an_mla_model_before_touching_torch(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli.probe",
            "model=deepseek_v3",
            f"hydra.run.dir={tmp_path}",
        ],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "MLA" in proc.stdout


@pytest.mark.integration
def test_imports_stay_lazy():
    code = (
        "import sys\n"
        "import pipeline.cli.probe, backends.probe.app\n"
        "import backends.probe.report, backends.probe.plots\n"
        "print(sorted(m for m in ('torch', 'flashinfer', 'matplotlib') if m in sys.modules))\n"
        "import backends.probe.runner, backends.probe.kernels, backends.probe.jit\n"
        "import torch\n"
        "print('flashinfer' in sys.modules, torch.cuda.is_initialized())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[]", "False False"]
