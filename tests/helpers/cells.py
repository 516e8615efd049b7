"""Compose a cell config as the CLI does, find leftover processes, reach console scripts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import psutil
from hydra import compose, initialize_config_dir

from pipeline.config.cell_config import to_cell_config
from pipeline.config.schema import RootConf, register_configs
from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
register_configs()


def compose_conf(overrides: list[str]) -> RootConf:
    """The typed config the CLI would build from these overrides."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return to_cell_config(compose("config", overrides=overrides))


def result_of(cell_dir: Path) -> CellResult:
    """The cell's result.json as every reader reads it (the test fails when there is none)."""
    result = read_result(cell_dir)
    assert result is not None, f"{cell_dir} has no result.json"
    return result


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Live processes whose command line contains ``text`` (e.g. a cell folder)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(text in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def console_script(name: str) -> str:
    """The installed console script ``name`` of the environment running the tests."""
    path = Path(sys.executable).parent / name
    assert path.is_file(), f"{path} is not installed: run `make install`"
    return str(path)


def run_script(
    name: str, *args: str, timeout: float = 400, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """The console script ``name`` run with ``args`` from ``cwd`` (the repo root), output kept."""
    return subprocess.run(
        [console_script(name), *args], cwd=cwd, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def ctrl_c_as_in_a_terminal() -> None:
    """``preexec_fn`` of a process a test sends Ctrl-C: its SIGINT handled as in a terminal.

    A runner started in the background (``make test &``, nohup) hands its children SIGINT
    ignored, and Python then keeps ignoring it: a Ctrl-C test would see the run go on to its end.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def report_markdown(cell: Path, out: Path) -> str:
    """``mtp-eval-report CELL --no-html`` (a cell judged alone: exit 0 or 2); its report.md."""
    run = run_script("mtp-eval-report", str(cell), "--out", str(out), "--no-html", timeout=120)
    assert run.returncode in (0, 2), run.stdout[-2000:] + run.stderr[-2000:]
    return (out / "report.md").read_text()


@contextlib.contextmanager
def external_sim(tmp_path: Path, overrides: list[str], extra_args: list[str]) -> Iterator[str]:
    """A simulated server started as the pipeline would for ``overrides``, run by the test.

    The cell is planned with ``dry_run=true`` (its argv, environment and answer key), the server
    started with ``extra_args`` added (e.g. keys) and stopped on exit; yields its base URL, for
    cells that use ``server=external``.
    """
    from pipeline.cell.job import run_cell
    from pipeline.serving.server import HealthPolicy, managed_server

    plan_dir = tmp_path / "external-sim"
    planned = run_cell(compose_conf([*overrides, "dry_run=true"]), plan_dir)
    argv = [*planned.server_argv, *extra_args]
    env = {**os.environ, **planned.provenance.server_env}
    url = f"http://127.0.0.1:{argv[argv.index('--port') + 1]}"
    policy = HealthPolicy(30, 0.05, 0.5)
    with managed_server(argv, env, url, plan_dir / "server.log", policy, 5):
        yield url


def unpack(archive: Path, into: Path) -> Path:
    """Extract a committed tar archive into ``into``.

    With the ``data`` filter where this Python has it (3.11.4+, 3.10.12+: no links or absolute
    paths); older 3.10 / 3.11 releases, which the project supports, lack the keyword.
    """
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)  # the project's own committed archive
    return into
