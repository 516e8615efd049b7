"""A tier that collects no test fails, by name, and the runner goes on to the next tier."""

from __future__ import annotations

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
        [sys.executable, "-m", "tests.tiers", "browser", "unit", "-k", "no_such_test_name"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == NO_TESTS_COLLECTED, run.stdout[-2000:] + run.stderr[-2000:]
    table = run.stdout[run.stdout.index("tier times against their budgets:") :]
    assert "browser" in table and "unit" in table  # both ran, both reported
    assert table.count("collected no tests: FAILED") == 2
