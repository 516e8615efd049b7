"""``mtp-eval-report SWEEP --mlflow URI`` against real MLflow tracking stores.

MLflow's sqlite backend, and an ``mlflow server`` process this test starts and stops on
127.0.0.1; read back with MLflow's own client. No mock: what a team's MLflow would hold.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import mlflow  # the dev extra's: a missing MLflow fails here, never skips
import pytest

from tests.helpers.cells import console_script
from tests.helpers.sim import free_port
from tests.integration.conftest import DemoReport

pytestmark = pytest.mark.integration


def export(demo: DemoReport, uri: str, out: Path) -> str:
    # Run beside ``out``: a sqlite store keeps its artifacts in ./mlruns, never in the checkout.
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(demo.sweep), "--out", str(out), "--mlflow", uri],
        cwd=out.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == demo.exit_code == 1, run.stdout[-2000:] + run.stderr[-2000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("mlflow:")]
    assert len(lines) == 1, run.stdout[-2000:]
    return lines[0]


def check_store(uri: str, tmp_path: Path) -> None:
    """One parent run with the release verdict, a child per cell, the report as artifacts."""
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("mtp-eval")
    runs = client.search_runs([experiment.experiment_id], max_results=50)
    parents = [r for r in runs if r.data.tags.get("mtp_eval.role") == "sweep"]
    assert len(parents) == 1 and len(runs) == 5, [r.info.run_name for r in runs]
    parent = parents[0]
    assert parent.data.tags["verdict"] == "NO-GO" and parent.data.metrics["exit_code"] == 1
    cells = {r.data.params["variant"] + "/" + r.data.params["kv_dtype"]: r for r in runs
             if r is not parent}  # fmt: skip
    assert set(cells) == {"fa3/auto", "fa3/fp8_e4m3", "fmha_v2/auto", "fmha_v2/fp8_e4m3"}
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


def test_sqlite_store_and_a_second_export_adds_no_run(demo_report: DemoReport, tmp_path: Path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    first = export(demo_report, uri, tmp_path / "report")
    assert first.endswith("4 cell runs, 5 created"), first
    second = export(demo_report, uri, tmp_path / "report")
    assert second.endswith("4 cell runs, 0 created"), second
    check_store(uri, tmp_path)


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[str]:
    """``mlflow server`` on 127.0.0.1 (sqlite backend, served artifacts), stopped afterwards."""
    port = free_port()
    log = (tmp_path / "mlflow-server.log").open("w")
    argv = [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1",
            "--port", str(port), "--workers", "1",
            "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
            "--artifacts-destination", str(tmp_path / "artifacts")]  # fmt: skip
    server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, (tmp_path / "mlflow-server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "mlflow server did not answer /health in 120 s"
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


def test_a_tracking_server_twice(demo_report: DemoReport, mlflow_server: str, tmp_path: Path):
    assert export(demo_report, mlflow_server, tmp_path / "r").endswith("5 created")
    assert export(demo_report, mlflow_server, tmp_path / "r").endswith("0 created")
    check_store(mlflow_server, tmp_path)


def test_a_run_whose_params_changed_is_refused_with_the_fix(tmp_path: Path):
    from pipeline.report.mlflow_export import MlflowExportError, write_run
    from pipeline.report.mlflow_fields import RunFields

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
