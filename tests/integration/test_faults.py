"""The fault matrix (docs/reliability.md): one row per fault, each checking the recorded status and
error kind, that no server process survives, that answered samples are on disk, and that a rerun
without the fault completes the cell from where it stopped."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.cell.job import run_cell
from tests.helpers.cells import (
    REPO,
    compose_conf,
    ctrl_c_as_in_a_terminal,
    processes_mentioning,
    result_of,
)

pytestmark = pytest.mark.integration
N_PROMPTS = 58 * 2  # bundled questions x the default 2 repeats
QUICK = [
    "server.simulated.startup_delay_s=0.05",  # ready at once: no row is about a slow start-up
    "client.progress=false",
    "server.stop_grace_s=5",
    "server.startup_timeout_s=30",
    "client.retry_backoff_s=0.01",
    "client.request_timeout_s=5",
]


def answered(cell_dir: Path) -> list[dict]:
    path = cell_dir / "samples" / "mcq_sample.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r["error_kind"] is None]


# fault override, expected status, expected error kind, answered samples that must be on disk
MATRIX = [
    ("reject_message='unsupported flag combination'", "failed", "server_rejected_config", 0),
    ("crash_at_start=true", "failed", "server_crash", 0),
    ("never_healthy=true", "failed", "server_timeout", 0),
    ("crash_after_requests=20", "failed", "server_died", 20),
    ("hang_after_requests=20", "failed", "too_many_errors", 20),
    ("http_5xx_rate=0.3", "ok", None, N_PROMPTS),  # retried until answered
    ("malformed_json_rate=0.2", "failed", "too_many_errors", None),  # not retried: counted
    ("connection_reset_rate=0.2", "ok", None, N_PROMPTS),  # retried until answered
    ("missing_spec_keys=true", "failed", "missing_accept_metric", N_PROMPTS),
    ("truncation_rate=0.3", "ok", None, N_PROMPTS),  # counted, never scored correct
]


@pytest.mark.parametrize(
    ("fault", "status", "kind", "kept"), MATRIX, ids=[row[0].split("=")[0] for row in MATRIX]
)
def test_fault_row(tmp_path, fault, status, kind, kept):
    cell_dir = tmp_path / "cell"
    extra = ["server.startup_timeout_s=2"] if "never_healthy" in fault else []
    if "hang" in fault:
        extra.append("client.request_timeout_s=1")
    result = run_cell(compose_conf([*QUICK, *extra, f"+server.simulated.faults.{fault}"]), cell_dir)
    assert (result.status, result.error and result.error.kind) == (status, kind), result.error
    assert result_of(cell_dir).status == status
    assert processes_mentioning(str(cell_dir)) == [], "a server process survived"
    if kept is not None:
        assert (
            len(answered(cell_dir)) >= kept if "hang" in fault else len(answered(cell_dir)) == kept
        )
    if status == "ok":
        return
    reusable = [r for r in answered(cell_dir) if r.get("spec")]  # a speculative cell needs spec
    again = run_cell(compose_conf(QUICK), cell_dir)  # the same cell, the fault gone
    assert again.status == "ok", again.error
    assert again.evals["mcq_sample"].n_samples == N_PROMPTS
    assert again.evals["mcq_sample"].resumed_samples == len(reusable)
    assert processes_mentioning(str(cell_dir)) == []


def test_port_taken_by_another_process(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = run_cell(compose_conf([*QUICK, f"server.port={port}"]), tmp_path / "cell")
    assert result.status == "failed" and result.error.kind == "port_in_use"
    assert f"server.port={port}" in result.error.message
    assert not (tmp_path / "cell" / "server.log").exists()  # nothing was started


def cli(sweep_dir: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline",
            *QUICK,
            "server.simulated.latency_s=0.05",
            "client.concurrency=4",
            f"hydra.run.dir={sweep_dir}",
            *extra,
        ],
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_pipeline_interrupted_mid_eval(tmp_path, sig):
    cell_dir = tmp_path / "cell"
    proc = cli(cell_dir)
    samples = cell_dir / "samples" / "mcq_sample.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not samples.exists() or len(samples.read_text().splitlines()) < 12
    ):
        time.sleep(0.05)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0, out
    result = result_of(cell_dir)
    assert result.status == "failed" and result.error.kind == "interrupted"
    assert processes_mentioning(str(cell_dir)) == []
    kept = len(answered(cell_dir))
    assert 12 <= kept < N_PROMPTS
    rerun = cli(cell_dir)
    rerun.communicate(timeout=120)
    final = result_of(cell_dir)
    assert final.status == "ok"
    assert final.evals["mcq_sample"].resumed_samples == kept
    assert final.evals["mcq_sample"].n_samples == N_PROMPTS


DISK_FULL = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # writes past the limit fail with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.argv = ["mtp-eval", *sys.argv[2:]]
from pipeline.cli.app import main
main()
"""


@pytest.mark.parametrize("limit", [30_000, 3_000], ids=["samples-full", "result-full"])
def test_full_disk_is_a_clear_error_never_a_complete_result(tmp_path, limit):
    cell_dir = tmp_path / "cell"
    proc = subprocess.run(
        [sys.executable, "-c", DISK_FULL, str(limit), *QUICK, f"hydra.run.dir={cell_dir}"],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode != 0
    result_path = cell_dir / "result.json"
    if result_path.exists():  # there was room for the result: it says what happened
        result = result_of(cell_dir)
        assert result.status == "failed" and result.error.kind == "disk_full"
        assert "File too large" in result.error.message
    else:  # no room even for the result: the error is on the terminal, no half file is left
        assert "File too large" in proc.stdout + proc.stderr
        assert not list(cell_dir.glob(".result.json.*"))
    assert processes_mentioning(str(cell_dir)) == []


def test_unreadable_dataset_row_fails_before_a_server_starts(tmp_path):
    data = tmp_path / "bad.csv"
    data.write_text("Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2\nq,a,b,c\n")
    result = run_cell(
        compose_conf(
            [
                *QUICK,
                "evals.mcq_sample.dataset.source=file",
                f"evals.mcq_sample.dataset.path={data}",
            ]
        ),
        tmp_path / "cell",
    )
    assert result.status == "failed" and result.error.kind == "dataset"
    assert "Incorrect Answer 3" in result.error.message and str(data) in result.error.message
    assert not (tmp_path / "cell" / "server.log").exists()
