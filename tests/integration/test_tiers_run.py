"""A tier that collects no test fails, by name, and the runner goes on to the next tier."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO
from tests.tiers import NO_TESTS_COLLECTED, Tier, run_tier

pytestmark = pytest.mark.integration


def test_an_empty_tier_is_exit_5_and_the_runner_fails_after_running_every_tier():
    empty = Tier("empty", ("tests/unit/test_tiers.py", "-m", "gpu"), 60, 0, "selects nothing")
    assert run_tier(empty, []).exit_code == NO_TESTS_COLLECTED
    run = subprocess.run(
        # the smallest tier twice: another collects every test module (30 s on a 2-core machine)
        [sys.executable, "-m", "tests.tiers", "slurm", "slurm", "-k", "no_such_test_name"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == NO_TESTS_COLLECTED, run.stdout[-2000:] + run.stderr[-2000:]
    table = run.stdout[run.stdout.index("tier times against their budgets:") :]
    assert table.count("  slurm ") == 2  # both ran, both reported
    assert table.count("collected no tests: FAILED") == 2


GROUPED = """
import os
from pathlib import Path

import pytest

LOG = Path(__file__).parent / "log"


def note(line):
    with LOG.open("a") as out:
        out.write(line + "\\n")


@pytest.fixture(scope="module")
def built_once():
    note("built " + os.environ.get("PYTEST_XDIST_WORKER", "-"))


@pytest.mark.parametrize("case", range(6))
def test_grouped(built_once, case):
    note("ran " + os.environ.get("PYTEST_XDIST_WORKER", "-"))
"""
# The repository's grouping hook, loaded by path (this folder's conftest is tests.conftest here).
OUR_HOOK = """
import importlib.util

spec = importlib.util.spec_from_file_location("repo_conftest", "{conftest}")
repo_conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repo_conftest)
pytest_collection_modifyitems = repo_conftest.pytest_collection_modifyitems
"""
SPREAD = """
import time

import pytest


@pytest.mark.parametrize("case", range(6))
def test_spread(case):
    time.sleep(0.2)
"""


def test_a_module_fixtures_tests_share_one_worker_under_loadgroup(tmp_path):
    """The tiers' xdist grouping holds with the pytest installed: pytest 9.2 with xdist 3.8 drops
    the group silently (pytest-xdist#1386), and every expensive module fixture is built twice."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tests / "conftest.py").write_text(OUR_HOOK.format(conftest=REPO / "tests" / "conftest.py"))
    (tests / "test_grouped.py").write_text(GROUPED)
    (tests / "test_spread.py").write_text(SPREAD)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", "loadgroup", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    log = (tests / "log").read_text().splitlines()
    assert len([line for line in log if line.startswith("built")]) == 1, log
    assert len({line.split()[1] for line in log}) == 1, log  # one worker ran them all
