"""Every console script of pyproject.toml works as installed, run from outside the checkout."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration
# tomllib is Python 3.11+; the project supports 3.10, so the section is read by hand.
_SECTION = (REPO / "pyproject.toml").read_text().split("[project.scripts]", 1)[1].split("\n[", 1)[0]
SCRIPTS = sorted(re.findall(r"^([\w-]+)\s*=", _SECTION, flags=re.MULTILINE))


def test_the_list_is_what_pyproject_declares_and_what_is_installed():
    assert {"mtp-eval", "mtp-eval-probe", "mtp-eval-report", "mtp-eval-signoff"} <= set(SCRIPTS)
    installed = importlib.metadata.distribution("mtp-eval").entry_points
    assert sorted(e.name for e in installed if e.group == "console_scripts") == SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_through_the_installed_entry_point(tmp_path, name):
    # From an empty folder: a relative config path would be looked up as a Python module there
    # (mtp-eval-probe failed so for every call: "Primary config module 'conf' not found").
    run = subprocess.run(
        [console_script(name), "--help"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr and "not found" not in run.stderr
    assert run.stdout.strip()


def test_probe_composes_its_config_as_installed(tmp_path):
    # --cfg job composes conf/probe.yaml with the shared groups and prints it; nothing runs.
    run = subprocess.run(
        [console_script("mtp-eval-probe"), "--cfg", "job", "probe=quick"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "budget_s:" in run.stdout and "attention:" in run.stdout


def test_tests_run_in_the_environment_that_has_the_scripts():
    assert console_script("mtp-eval").startswith(sys.prefix)
