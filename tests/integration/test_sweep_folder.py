"""Another sweep into a finished sweep's folder is refused; the same sweep resumes there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script
from tests.helpers.proxied import FAST

pytestmark = pytest.mark.integration


def sweep(folder: Path, *values: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script("mtp-eval"), "-m", *values, *FAST, f"hydra.sweep.dir={folder}"],
        capture_output=True, text=True, timeout=240, check=False, cwd=folder.parent,
    )  # fmt: skip


def test_a_different_sweep_says_what_it_moves_and_the_same_one_resumes(tmp_path):
    folder = tmp_path / "m"
    first = sweep(folder, "backend=fa3")
    assert first.returncode == 0, first.stdout + first.stderr
    saved = (folder / "multirun.yaml").read_text()
    (cell,) = folder.glob("0_*_fa3_*")
    result = (cell / "result.json").read_text()
    other = sweep(folder, "backend=flashinfer")
    assert other.returncode == 0, other.stdout + other.stderr
    said = other.stderr
    assert f"{folder} held another sweep (1 jobs): its multirun.yaml is kept as " in said
    assert "multirun.previous-1.yaml; the jobs that differ:" in said
    assert "job 0: was [backend=fa3 server.simulated.startup_delay_s=0.2" in said
    assert "now [backend=flashinfer server.simulated.startup_delay_s=0.2" in said
    assert (folder / "multirun.previous-1.yaml").read_text() == saved  # the earlier record
    assert (cell / "result.json").read_text() == result  # the earlier cell is untouched
    assert not list(folder.glob("*/samples.previous-*"))
    again = sweep(folder, "backend=flashinfer", "client.concurrency=8")  # how it runs: a resume
    assert again.returncode == 0 and "skipped, already finished" in again.stdout, again.stderr
    assert "held another sweep" not in again.stderr


def test_a_cell_folder_measured_again_under_another_config_says_what_moved(tmp_path):
    cell = tmp_path / "cell"
    run = [console_script("mtp-eval"), *FAST, f"hydra.run.dir={cell}"]
    first = subprocess.run(run, capture_output=True, text=True, timeout=240, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    other = subprocess.run(
        [*run, "evals.mcq_sample.repeats=1"], capture_output=True, text=True, timeout=240
    )
    assert other.returncode == 0, other.stdout + other.stderr
    (moved,) = cell.glob("samples.previous-*")
    assert (moved / "mcq_sample.jsonl").exists()
    assert f"116 sample lines): moved to {moved}/, and this cell measured again" in other.stdout
