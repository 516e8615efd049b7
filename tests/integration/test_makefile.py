"""``make demo`` installs only what the demo needs and says so; ``make test`` installs dev.

``make -n`` prints the recipes a fresh checkout would run (a venv that does not exist yet), so
this checks the real Makefile without installing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.helpers.cells import REPO, console_script

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
]


def planned(target: str, tmp_path) -> list[str]:
    run = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'fresh-venv'}"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return run.stdout.splitlines()


def test_demo_installs_the_base_only_and_says_what(tmp_path):
    lines = planned("demo", tmp_path)
    installs = [line for line in lines if "pip install" in line and "--upgrade pip" not in line]
    assert installs and all(line.rstrip().endswith("-e .") for line in installs), installs
    assert not any("[dev]" in line or "torch" in line.split("echo")[0] for line in installs)
    said = " ".join(line for line in lines if line.startswith("echo"))
    assert "base dependencies only" in said and "no torch" in said
    first_echo = next(i for i, line in enumerate(lines) if line.startswith("echo"))
    assert first_echo < lines.index(installs[0])  # said before pip runs


def test_test_target_still_installs_the_dev_extra(tmp_path):
    lines = planned("test", tmp_path)
    assert any("pip install" in line and "'.[dev]'" in line for line in lines), lines


@pytest.mark.parametrize(("target", "tiers"), [
    ("test", "unit integration slow serial"),  # after lint
    ("test-services", "services"),
    ("test-slurm", "slurm"),
])  # fmt: skip
def test_each_test_target_runs_its_tiers_through_the_tier_runner(tmp_path, target, tiers):
    lines = planned(target, tmp_path)
    runs = [line for line in lines if "-m tests.tiers" in line]
    assert [line.split("-m tests.tiers ", 1)[1] for line in runs] == [tiers], lines
    if target == "test":
        assert any("mypy" in line for line in lines[: lines.index(runs[0])])


# Installed here, absent from a base install: every import of them fails as if not installed,
# and importlib.util.find_spec says None, as it would.
BLOCK_DEV_EXTRA = """
import importlib.util
import sys
BLOCKED = {"torch", "pytest", "hypothesis", "submitit", "hydra_plugins", "ruff", "mypy"}
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (not in the base install)")
sys.meta_path.insert(0, _Absent())
_find_spec = importlib.util.find_spec
def find_spec(name, package=None):
    return None if name.split(".")[0] in BLOCKED else _find_spec(name, package)
importlib.util.find_spec = find_spec
"""


def test_the_demo_runs_without_the_dev_extra(tmp_path):
    # What `make demo` runs, with every dev-only package unimportable (here and in the server).
    (tmp_path / "block").mkdir()
    (tmp_path / "block" / "sitecustomize.py").write_text(BLOCK_DEV_EXTRA)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "block")}
    sweep = tmp_path / "demo"
    run = subprocess.run(
        [console_script("mtp-eval"), "experiment=demo", f"hydra.sweep.dir={sweep}",
         "evals.mcq_sample.repeats=2", "server.simulated.startup_delay_s=0.1"],
        env=env, capture_output=True, text=True, timeout=240, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0 and "not in the base install" not in run.stdout + run.stderr, (
        run.stdout[-3000:] + run.stderr[-3000:]
    )
    assert len(list(sweep.glob("*/result.json"))) == 4
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep)],
        env=env, capture_output=True, text=True, timeout=240, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert report.returncode in (0, 1, 2) and "Traceback" not in report.stderr, report.stderr
    assert (sweep / "report" / "report.html").is_file()
