"""``mtp-eval-report SWEEP --mlflow URI`` against real MLflow tracking stores.

An ``mlflow server`` process this test starts and stops on 127.0.0.1 (sqlite backend, artifacts
served through it, as a team runs one), and MLflow's sqlite store opened afterwards by the same
installed ``mlflow server``; read back with MLflow's own client. No mock: what a team's MLflow
would hold. Marker ``mlflow`` (``make test`` runs it); a server takes about 7 s to answer.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

import mlflow  # the dev extra's: a missing MLflow fails here, never skips
import pytest

from tests.helpers.cells import console_script, result_of
from tests.helpers.sim import free_port
from tests.integration.conftest import DemoReport

pytestmark = [pytest.mark.integration, pytest.mark.mlflow]
CELLS = {"fa3/auto", "fa3/fp8_e4m3", "fmha_v2/auto", "fmha_v2/fp8_e4m3"}


def export(sweep: Path, uri: str, out: Path) -> str:
    # Run beside ``out``: a sqlite store keeps its artifacts in ./mlruns, never in the checkout.
    out.parent.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep), "--out", str(out), "--mlflow", uri],
        cwd=out.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]  # the demo's NO-GO
    lines = [line for line in run.stdout.splitlines() if line.startswith("mlflow:")]
    assert len(lines) == 1, run.stdout[-2000:]
    return lines[0]


@contextmanager
def mlflow_server(store_uri: str, folder: Path) -> Iterator[str]:
    """``mlflow server`` on 127.0.0.1 over ``store_uri`` (artifacts served), stopped afterwards."""
    port, log_path = free_port(), folder / "mlflow-server.log"
    argv = [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1",
            "--port", str(port), "--workers", "1", "--backend-store-uri", store_uri,
            "--artifacts-destination", str(folder / "artifacts")]  # fmt: skip
    with log_path.open("w") as log:
        server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
                                  start_new_session=True)  # fmt: skip
        try:
            yield _wait_healthy(f"http://127.0.0.1:{port}", server, log_path)
        finally:
            _stop_group(server)


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return url
        except OSError:
            pass
        assert server.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "mlflow server did not answer /health in 120 s"
        time.sleep(0.5)


def _stop_group(server: subprocess.Popen[bytes]) -> None:
    # The server's job consumers (huey) outlive it unless the whole group goes.
    os.killpg(server.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        server.wait(timeout=20)
    with suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=10)


def epoch_ms(stamp: str | None) -> int:
    assert stamp, "the demo's cells record their start and end"
    return int(datetime.fromisoformat(stamp).timestamp() * 1000)


def runs_of(uri: str) -> tuple[Any, Any, dict[str, Any]]:
    """The client, the parent run and the cell runs by ``variant/kv_dtype``."""
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("mtp-eval")
    runs = client.search_runs([experiment.experiment_id], max_results=50)
    parents = [r for r in runs if r.data.tags.get("mtp_eval.role") == "sweep"]
    assert len(parents) == 1 and len(runs) == 5, [r.info.run_name for r in runs]
    cells = {r.data.params["variant"] + "/" + r.data.params["kv_dtype"]: r for r in runs
             if r is not parents[0]}  # fmt: skip
    assert set(cells) == CELLS
    return client, parents[0], cells


def check_store(uri: str, tmp_path: Path) -> None:
    """One parent run with the release verdict, a child per cell, the report as artifacts."""
    client, parent, cells = runs_of(uri)
    assert parent.data.tags["verdict"] == "NO-GO" and parent.data.metrics["exit_code"] == 1
    for run in cells.values():
        assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert run.info.status == "FINISHED"
        assert 0 < run.data.metrics["accuracy/mcq_sample"] < 1
        assert run.data.metrics["accept_length/mcq_sample"] > 1
        assert "--kv-cache-dtype" in run.data.params["server_argv"]
        assert run.data.params["sglang_version_reported"] == "0.5.19"
        assert run.data.params["version/mtp-eval"] == "0.1.0"
    worse = cells["fmha_v2/fp8_e4m3"].data
    assert worse.tags["verdict"] == "NO-GO"
    assert worse.tags["verdict/accuracy_vs_baseline/mcq_sample"] == "NO-GO"
    assert worse.metrics["vs_baseline_upper/mcq_sample"] < -worse.metrics[
        "vs_baseline_margin/mcq_sample"]  # fmt: skip
    assert cells["fmha_v2/auto"].data.tags["verdict"] == "GO"
    files = {f.path for f in client.list_artifacts(parent.info.run_id, "report")}
    names = ("report.md", "report.html", "summary.json", "cells.csv", "junit.xml")
    assert files == {f"report/{n}" for n in names}
    local = client.download_artifacts(parent.info.run_id, "report/summary.json", str(tmp_path))
    assert json.loads(Path(local).read_text())["verdict"] == "NO-GO"


def check_cells_as_a_team_sees_them(uri: str, sweep: Path, tmp_path: Path) -> dict[str, str]:
    """Names, measured times, artifacts of each cell's run; returns the run ids by cell."""
    client, parent, cells = runs_of(uri)
    assert parent.info.run_name == f"sweep {sweep.name}"
    starts, ends = [], []
    for key, run in cells.items():
        folder = Path(run.data.tags["mtp_eval.folder"])
        assert folder.parent == sweep, folder  # the cell of this very export
        result = result_of(folder)
        name = f"{sweep.name} {result.cell.name} @ {run.data.params['gpu']} [simulated]"
        assert run.info.run_name == name and str(sweep.parent) not in name
        assert run.info.start_time == epoch_ms(result.started_at)
        assert run.info.end_time == epoch_ms(result.ended_at)
        starts.append(run.info.start_time)
        ends.append(run.info.end_time)
        top = {f.path for f in client.list_artifacts(run.info.run_id)}
        assert top == {"result.json", "samples"}, top
        samples = {f.path for f in client.list_artifacts(run.info.run_id, "samples")}
        assert "samples/mcq_sample.jsonl" in samples, samples
        copy = Path(client.download_artifacts(run.info.run_id, "result.json", str(tmp_path / key)))
        assert copy.read_bytes() == (folder / "result.json").read_bytes()
        lines = client.download_artifacts(run.info.run_id, "samples/mcq_sample.jsonl",
                                          str(tmp_path / key))  # fmt: skip
        assert Path(lines).read_bytes() == (folder / "samples/mcq_sample.jsonl").read_bytes()
    assert (parent.info.start_time, parent.info.end_time) == (min(starts), max(ends))
    return {key: run.info.run_id for key, run in cells.items()}


def test_a_tracking_server_twice_then_from_a_moved_renamed_copy(
    demo_report: DemoReport, tmp_path: Path
):
    """The same runs, updated, whether the sweep is exported again in place or moved away."""
    with mlflow_server(f"sqlite:///{tmp_path / 'server.db'}", tmp_path) as url:
        assert export(demo_report.sweep, url, tmp_path / "r" / "report").endswith("5 created")
        assert export(demo_report.sweep, url, tmp_path / "r" / "report").endswith("0 created")
        check_store(url, tmp_path / "read")
        ids = check_cells_as_a_team_sees_them(url, demo_report.sweep, tmp_path / "read")
        moved = tmp_path / "archive" / "fmha-study"
        shutil.copytree(demo_report.sweep, moved, symlinks=True)
        again = export(moved, url, tmp_path / "m" / "report")
        assert again.endswith("4 cell runs, 0 created"), again
        assert check_cells_as_a_team_sees_them(url, moved, tmp_path / "read2") == ids


def test_the_sqlite_store_the_client_wrote_opens_in_mlflow_server(
    demo_report: DemoReport, tmp_path: Path
):
    """The pinned client writes a schema the installed server reads (3.18 vs 3.17.2 did not)."""
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert export(demo_report.sweep, store, tmp_path / "report").endswith("5 created")
    with mlflow_server(store, tmp_path) as url:
        check_store(url, tmp_path / "read")
        check_cells_as_a_team_sees_them(url, demo_report.sweep, tmp_path / "read")


def test_a_store_of_another_mlflow_schema_is_refused_with_the_fix(
    demo_report: DemoReport, tmp_path: Path
):
    """A store a newer MLflow migrated (3.18's head revision) is named, not a traceback."""
    db = tmp_path / "mlflow.db"
    mlflow.tracking.MlflowClient(tracking_uri=f"sqlite:///{db}").search_experiments()
    with closing(sqlite3.connect(db)) as store, store:
        store.execute("UPDATE alembic_version SET version_num = 'f4a9b2c7d1e6'")
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(demo_report.sweep), "--out",
         str(tmp_path / "report"), "--mlflow", f"sqlite:///{db}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"the MLflow store at sqlite:///{db} has another schema than MLflow 3." in run.stderr
    assert "found version f4a9b2c7d1e6" in run.stderr and "internal error" not in run.stderr


def test_a_run_whose_params_changed_is_refused_with_the_fix(tmp_path: Path):
    from pipeline.report.write.mlflow_export import MlflowExportError, write_run
    from pipeline.report.write.mlflow_runs import RunFields

    client = mlflow.tracking.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    experiment = client.create_experiment("e", artifact_location=(tmp_path / "a").as_uri())
    first = RunFields("k", "cell", params={"variant": "fa3"}, metrics={"accuracy/x": 0.5})
    run_id, created = write_run(client, experiment, first)
    assert created and write_run(client, experiment, first) == (run_id, False)
    moved = RunFields("k", "cell", params={"variant": "fa3"}, metrics={"accuracy/x": 0.6})
    write_run(client, experiment, moved)  # a metric may change: its latest value is the new one
    assert client.get_run(run_id).data.metrics["accuracy/x"] == 0.6
    with pytest.raises(MlflowExportError, match="params never change; delete that run"):
        write_run(client, experiment, RunFields("k", "cell", params={"variant": "triton"}))
