"""The test tiers of tests/tiers.py: what each selects, and the table CI prints."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from tests.tiers import BY_NAME, NO_TESTS_COLLECTED, OWN_TIERS, TIERS, Outcome, pytest_argv, summary

REPO = Path(__file__).resolve().parents[2]
MAKE_TEST = ("unit", "integration", "slow", "serial")


def test_every_registered_marker_with_its_own_tier_is_kept_out_of_make_test():
    markers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]["markers"]  # fmt: skip
    names = {m.split(":", 1)[0] for m in markers}
    own = {"gpu", "slurm", "mlflow", "browser", "rehearsal"}
    assert own <= names and {"serial", "slow", "integration"} <= names
    assert set(OWN_TIERS.split(" or ")) == own
    for name in MAKE_TEST:
        expression = BY_NAME[name].args[BY_NAME[name].args.index("-m") + 1]
        assert f"not ({OWN_TIERS}" in expression, name


def test_every_test_folder_has_a_tier():
    folders = {p.name for p in (REPO / "tests").iterdir() if any(p.glob("test_*.py"))}
    paths = {Path(a).name for t in TIERS for a in t.args if a.startswith("tests")}
    assert folders - {"gpu"} <= paths | {"tests"}  # gpu: a GPU host's own run
    assert {"unit", "integration", "slow", "slurm"} <= paths


def test_parallel_tiers_use_two_workers_and_keep_shared_fixtures_together():
    argv = pytest_argv(BY_NAME["integration"], ["-x"])
    assert argv[argv.index("-n") + 1] == "2" and argv[argv.index("--dist") + 1] == "loadgroup"
    assert argv[-1] == "-x"
    assert "-n" not in pytest_argv(BY_NAME["serial"], [])


@pytest.mark.parametrize(("code", "wall", "said"), [
    (0, 50.0, "passed"),
    (1, 50.0, "FAILED (pytest exit 1)"),
    (NO_TESTS_COLLECTED, 1.0, "collected no tests: FAILED"),
    (0, 500.0, "OVER"),
])  # fmt: skip
def test_the_closing_table_says_each_tiers_time_against_its_budget(code, wall, said):
    table = summary([Outcome(BY_NAME["unit"], code, wall), Outcome(BY_NAME["slow"], 0, 10.0)])
    unit = next(line for line in table.splitlines() if line.strip().startswith("unit"))
    assert said in unit and f"{wall:.1f} s of" in unit
    assert ("OVER" in unit) == (wall > BY_NAME["unit"].budget_s)
    assert table.splitlines()[-1].split()[:2] == ["total", f"{wall + 10.0:.1f}"]
