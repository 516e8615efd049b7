"""What a user sees from the installed ``mtp-eval`` off a terminal (SLURM logs, CI).

Ctrl-C ends with one line and exit code 130; evals and the server's start-up report progress
with numbers; an external URL that never answers fails within the configured bound, naming it;
a note that ends with its fix is printed whole.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.serving.server import free_port
from tests.helpers.cells import (
    console_script,
    ctrl_c_as_in_a_terminal,
    processes_mentioning,
    result_of,
)

pytestmark = pytest.mark.integration
QUIET = ["server.stop_grace_s=5", "server.startup_timeout_s=30"]


def mtp_eval(run_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script("mtp-eval"), *QUIET, *args, f"hydra.run.dir={run_dir}"],
        capture_output=True, text=True, timeout=timeout, check=False, cwd=run_dir.parent,
    )  # fmt: skip


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path):
    run_dir = tmp_path / "run"
    args = ["server.simulated.latency_s=0.2", "client.concurrency=2", "client.follow_server=false"]
    proc = subprocess.Popen(
        [console_script("mtp-eval"), *QUIET, *args, f"hydra.run.dir={run_dir}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )  # fmt: skip
    samples = run_dir / "samples" / "mcq_sample.jsonl"
    deadline = time.monotonic() + 60
    while not (samples.exists() and samples.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends to the foreground process
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert err.strip().splitlines() == [
        "mtp-eval: interrupted (Ctrl-C); the server was stopped, answered samples are kept, "
        "and the same command resumes the cell"
    ], err
    result = result_of(run_dir)
    assert result.error is not None and result.error.kind == "interrupted"
    assert samples.read_text().strip()  # what was answered is on disk
    assert processes_mentioning(str(run_dir)) == []


def test_progress_lines_off_a_terminal(tmp_path):
    run = mtp_eval(
        tmp_path / "run",
        "server.simulated.startup_delay_s=1.5",
        "server.progress_every_s=0.4",
        "server.simulated.latency_s=0.05",
        "client.concurrency=4",
        "client.follow_server=false",
        "client.progress_every_s=0.5",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    waiting = re.findall(r"waiting for the server at http://\S+: (\d+) s of 30 s", run.stdout)
    assert len(waiting) >= 2, run.stdout  # start-up: elapsed of the limit...
    assert "; last log line: " in run.stdout  # ...and what the server last said
    lines = re.findall(r"mcq_sample: (\d+)/116 requests \(\d+%\), ([\d.]+) req/s", run.stdout)
    assert len(lines) >= 2, run.stdout
    assert lines[-1][0] == "116" and float(lines[-1][1]) > 0
    assert [int(done) for done, _ in lines] == sorted(int(done) for done, _ in lines)


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.serial  # under 20 s: alone
@pytest.mark.parametrize("version", [None, "0.5.19"], ids=["version_query", "health_wait"])
def test_external_url_that_never_answers_fails_within_the_bound(tmp_path, silent_url, version):
    started = time.monotonic()
    extra = [f"server.sglang_version={version}"] if version else []
    run = mtp_eval(
        tmp_path / "run",
        "server=external",
        f"server.base_url={silent_url}",
        "server.external_timeout_s=2",
        "gpu=h200",
        *extra,
        timeout=60,
    )
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed
    if version is None:  # the pre-flight asks for the version: refused before the cell (exit 2)
        assert run.returncode == 2, run.stdout + run.stderr
        message = run.stderr
    else:
        assert run.returncode == 1, run.stdout + run.stderr
        error = result_of(tmp_path / "run").error
        message = error.message if error is not None else ""
        assert silent_url in run.stdout
    assert silent_url in message and "server.external_timeout_s" in message
    assert "Traceback" not in run.stdout + run.stderr


def test_external_url_refusing_connections_says_so_without_claiming_a_wait(tmp_path):
    # Found by QA: a refused connection failed at once, but the message said "within 60 s".
    url = f"http://127.0.0.1:{free_port()}"
    run = mtp_eval(tmp_path / "run", "server=external", f"server.base_url={url}", "gpu=h200")
    message = run.stderr  # the pre-flight asks for the version before the cell: exit 2
    assert run.returncode == 2 and "Connection refused" in message, message
    assert "within" not in message and "server.external_timeout_s=60 s" in message


def test_a_note_that_ends_with_its_fix_is_printed_whole(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        run = mtp_eval(tmp_path / "run", f"server.port={port}")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "or leave server.port unset for a free one" in run.stdout, run.stdout


def test_ctrl_c_on_the_signoff_wrapper_leaves_no_server_and_no_traceback(tmp_path):
    # Ctrl-C reaches the whole foreground process group: the wrapper and the sweep it runs.
    sweep = tmp_path / "sweep"
    args = ["--experiment", "demo", f"--sweep-dir={sweep}", "server.simulated.latency_s=0.2",
            "client.concurrency=2", "client.follow_server=false"]  # fmt: skip
    proc = subprocess.Popen(
        [console_script("mtp-eval-signoff"), *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not list(sweep.glob("0_*/samples/*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert f"run again with --sweep-dir {sweep} to resume" in err
    first = json.loads(next(sweep.glob("0_*/result.json")).read_text())
    assert first["error"]["kind"] == "interrupted"
    assert processes_mentioning(str(sweep)) == []  # the sweep stopped its server


@pytest.mark.parametrize("multirun", [True, False], ids=["sweep", "single"])
def test_ctrl_c_in_a_timestamped_folder_prints_the_folder_to_resume(tmp_path, multirun):
    # 24 of the 58 questions (48 requests, 4.8 s at 0.2 s two at a time): still seconds of eval
    # left when Ctrl-C comes 0.5 s after the first sample, and the resume that ends the cell asks
    # about 40 of them, not the 110 of all 116 (11 s).
    args = ["server.simulated.latency_s=0.2", "client.concurrency=2", "client.follow_server=false",
            "evals.mcq_sample.dataset.limit=24"]  # fmt: skip
    sweep = ["-m", "backend=fa3"] if multirun else []
    command = [console_script("mtp-eval"), *sweep, *QUIET, *args]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("outputs/*/*/**/samples/mcq_sample.jsonl")):
        assert time.monotonic() < deadline, "no sample was written"
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    said = re.search(rf"the same command with ({key}=(\S+)) added resumes it", err)
    assert said, err
    folder = Path(said.group(2))
    assert folder.parent.parent == tmp_path / "outputs" and folder.is_dir()
    again = subprocess.run(
        [*command, said.group(1)], capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    assert again.returncode == 0, again.stdout + again.stderr
    cell = next(folder.glob("*/result.json")).parent if multirun else folder
    result = result_of(cell)
    assert result.status == "ok" and result.evals["mcq_sample"].resumed_samples > 0
