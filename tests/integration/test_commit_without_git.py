"""A cell run from a copy of the working tree without ``.git`` (what the GPU machine gets).

The copy holds the packages and ``conf/`` as ``live_signoff.sh``'s ``sync_repo`` leaves them;
``python -m pipeline`` runs there on the simulated server, as the live phases do. Its commit
comes from ``MTP_EVAL_COMMIT``, recorded with that source and shown by the report; the tick of
``live_signoff.sh`` refuses a value that is no commit before it starts anything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration
SHA = "a85cf88e1234567890abcdef1234567890abcdef"
PACKAGES = ("pipeline", "conf", "evals", "backends", "hydra_plugins")
CELL = ["evals=[mcq_sample]", "evals.mcq_sample.repeats=1", "server.simulated.startup_delay_s=0.1"]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repo's code without ``.git``."""
    root = tmp_path_factory.mktemp("no-git") / "repo"
    for name in PACKAGES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run_cell(copy: Path, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k != "MTP_EVAL_COMMIT"}
    variables = {**inherited, "PYTHONPATH": str(copy), **env}
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *CELL, f"hydra.run.dir={out}"], cwd=copy,
        env=variables, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_commit_comes_from_the_environment_with_its_source(copy: Path, tmp_path: Path):
    run = run_cell(copy, tmp_path / "cell", MTP_EVAL_COMMIT=SHA)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads((tmp_path / "cell" / "result.json").read_text())
    assert result["provenance"]["mtp_eval_git"] == {
        "sha": SHA, "dirty": None, "source": "MTP_EVAL_COMMIT"}  # fmt: skip
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(tmp_path / "cell")], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode in (0, 2), report.stderr[-2000:]
    md = (tmp_path / "cell" / "report" / "report.md").read_text()
    assert f"| {SHA[:10]} (MTP_EVAL_COMMIT) |" in md


def test_without_it_the_commit_is_unknown_not_made_up(copy: Path, tmp_path: Path):
    run = run_cell(copy, tmp_path / "cell")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads((tmp_path / "cell" / "result.json").read_text())
    assert result["provenance"]["mtp_eval_git"] == {"sha": None, "dirty": None}


def test_a_value_that_is_no_commit_is_refused_before_anything_starts(copy: Path, tmp_path: Path):
    run = run_cell(copy, tmp_path / "cell", MTP_EVAL_COMMIT="$(git rev-parse HEAD)")
    assert run.returncode == 2 and not (tmp_path / "cell").exists()
    assert "MTP_EVAL_COMMIT='$(git rev-parse HEAD)' is not a commit id" in run.stderr


def tick(tmp_path: Path, commit: str) -> subprocess.CompletedProcess[str]:
    # LIVE_PLAN=frontier on 0.5.19 starts no phase: the tick checks, logs and returns.
    env = {**os.environ, "LIVE": str(tmp_path / "live"), "MTP_REPO": str(tmp_path / "repo"),
           "LIVE_PLAN": "frontier", "LIVE_SGLANG": "0.5.19", "LIVE_SERVER": "simulated",
           "MTP_EVAL_COMMIT": commit, "OUT": ""}  # fmt: skip
    script = REPO / "benchmarks" / "live_h200" / "live_signoff.sh"
    return subprocess.run(["bash", str(script), "tick", "0"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


def test_the_live_tick_passes_a_commit_on_and_refuses_a_bad_one(tmp_path: Path):
    good = tick(tmp_path / "good", SHA)
    assert good.returncode == 0 and f"mtp-eval commit {SHA} (MTP_EVAL_COMMIT)" in good.stdout
    copied = tmp_path / "good" / "repo"
    assert (copied / "pipeline" / "cell" / "job.py").exists()
    # the checkout's tools stay behind: a rehearsal's tick copied the 2.3-GB .venv each time
    tools = [n for n in (".git", ".venv", ".mypy_cache", ".gpu-bundle") if (REPO / n).exists()]
    assert tools and not [n for n in tools if (copied / n).exists()]
    bad = tick(tmp_path / "bad", "HEAD")
    assert bad.returncode == 2 and "MTP_EVAL_COMMIT=HEAD is not a commit id" in bad.stdout
    assert not (tmp_path / "bad" / "repo").exists()  # stopped before the copy, nothing started
