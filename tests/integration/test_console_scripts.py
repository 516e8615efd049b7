"""Every console script of pyproject.toml works as installed, run from outside the checkout."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, console_script, result_of

pytestmark = pytest.mark.integration
# tomllib is Python 3.11+; the project supports 3.10, so the section is read by hand.
_SECTION = (REPO / "pyproject.toml").read_text().split("[project.scripts]", 1)[1].split("\n[", 1)[0]
DECLARED = dict(re.findall(r'^([\w-]+)\s*=\s*"([\w.:]+)"', _SECTION, flags=re.MULTILINE))
SCRIPTS = sorted(DECLARED)


def test_the_list_is_what_pyproject_declares_and_what_is_installed():
    assert {"mtp-eval", "mtp-eval-probe", "mtp-eval-report", "mtp-eval-signoff"} <= set(SCRIPTS)
    installed = importlib.metadata.distribution("mtp-eval").entry_points
    scripts = {e.name: e.value for e in installed if e.group == "console_scripts"}
    # An install made before a module moved keeps the old targets: `make install` renews it.
    assert scripts == DECLARED, "the venv's entry points are stale: run `make install`"


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


# What a wheel carries: the packages and conf/ (CONF_DIR sits beside pipeline/), nothing else.
_SOURCES = ("pyproject.toml", "README.md", "pipeline", "backends", "evals", "conf", "hydra_plugins")


def _install_wheel(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Build the project's wheel from a copy of its sources and install it under a prefix."""
    src, prefix = tmp_path / "src", tmp_path / "prefix"
    src.mkdir()
    for name in _SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
                    str(src)], check=True, timeout=300)  # fmt: skip
    wheel = next(tmp_path.glob("mtp_eval-*.whl"))
    # --ignore-installed: without it pip uninstalls the venv's own (editable) mtp-eval first.
    subprocess.run([*pip, "install", "--no-deps", "--ignore-installed", "--prefix", str(prefix),
                    str(wheel)], check=True, timeout=300)  # fmt: skip
    site = sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    # The wheel's packages shadow the checkout's editable install (its finder comes last).
    return prefix, {**os.environ, "PYTHONPATH": site}


def test_a_wheel_install_runs_every_script_and_a_cell_from_elsewhere(tmp_path):
    # A wheel holds no checkout: conf/ must travel in it ("Primary config directory not found").
    prefix, env = _install_wheel(tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [sys.executable, "-c", "import pipeline; print(pipeline.__file__)"],
        capture_output=True, text=True, check=True, cwd=work, env=env,
    )  # fmt: skip
    assert where.stdout.startswith(str(prefix)), where.stdout  # the wheel's code, not the repo's
    for name in SCRIPTS:
        run = subprocess.run([str(prefix / "bin" / name), "--help"], capture_output=True,
                             text=True, timeout=120, check=False, cwd=work, env=env)  # fmt: skip
        assert run.returncode == 0, name + run.stdout + run.stderr
    cell = subprocess.run(
        [str(prefix / "bin" / "mtp-eval"), "server.startup_timeout_s=60", "hydra.run.dir=cell"],
        capture_output=True, text=True, timeout=300, check=False, cwd=work, env=env,
    )  # fmt: skip
    assert cell.returncode == 0, cell.stdout[-3000:] + cell.stderr[-3000:]
    result = result_of(work / "cell")
    assert result.status == "ok" and result.evals
    assert Path(console_script("mtp-eval")).is_file()  # the venv's own install is untouched
