"""The demo sweep, run once for the tests that read every output it writes."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, console_script


@dataclass(frozen=True)
class DemoReport:
    """``make demo``'s sweep on the simulated server and ``mtp-eval-report``'s run over it."""

    sweep: Path
    out: Path  # the report folder
    exit_code: int
    stdout: str


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> DemoReport:
    """The demo (fmha_v2 vs fa3 x KV auto / fp8_e4m3; fmha_v2 + fp8 NO-GO), reported."""
    sweep = tmp_path_factory.mktemp("demo") / "sweep"
    run = subprocess.run(
        [console_script("mtp-eval"), "experiment=demo", f"hydra.sweep.dir={sweep}",
         "server.simulated.startup_delay_s=0.1"],
        cwd=REPO, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    out = sweep / "report"
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode in (0, 1, 2), report.stderr
    return DemoReport(sweep, out, report.returncode, report.stdout + report.stderr)
