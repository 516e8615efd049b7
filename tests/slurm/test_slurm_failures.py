"""What a cluster user meets: a cancelled cell, the time limit (SIGUSR2 first), requests no node
can meet, a refused submission. Each ends with a recorded status or one line, never a hang."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from pipeline.cluster.slurm_messages import CLIENT_MISSING
from tests.helpers.cells import processes_mentioning
from tests.helpers.slurm import SMALL_CELLS, assert_ran_on_slurm, report, results

pytestmark = [pytest.mark.slurm, pytest.mark.timeout(300)]
# Two cells (they run side by side on the 2-CPU node); slow requests keep one running long enough
# to be cancelled. Latency is not part of a cell's identity: a rerun without it resumes the cell.
TWO_CELLS = [
    *SMALL_CELLS,
    "backend=fmha_v2,fa3",
    "client.concurrency=2",
    "client.follow_server=false",
]
SLOW = ["server.simulated.latency_s=0.2"]


def finish(proc, timeout: float) -> str:
    """The sweep's output once it ended; a sweep still waiting after ``timeout`` is a failure."""
    try:
        return proc.communicate(timeout=timeout)[0]
    except BaseException:
        proc.kill()
        proc.communicate()
        raise


def answered(cell_dir: Path) -> int:
    samples = cell_dir / "samples" / "mcq_sample.jsonl"
    return len(samples.read_text().splitlines()) if samples.exists() else 0


def wait_for_samples(sweep: Path, prefix: str, count: int, timeout: float = 120) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(sweep.glob(f"{prefix}_*"))
        if found and answered(found[0]) >= count:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"cell {prefix} of {sweep} never answered {count} requests")


def test_cancelled_cell_is_recorded_the_sweep_goes_on_and_a_rerun_resumes(slurm, tmp_path):
    sweep, clean = tmp_path / "cancelled", tmp_path / "clean"
    proc = slurm.popen_mtp_eval("-m", *TWO_CELLS, *SLOW, f"hydra.sweep.dir={sweep}")
    cell = wait_for_samples(sweep, "0", 5)
    running = slurm.run("squeue", "-h", "-t", "RUNNING", "-o", "%i").stdout.split()
    (task,) = [job for job in running if job.endswith("_0")]
    assert slurm.run("scancel", task).returncode == 0
    out = finish(proc, 180)  # Hydra returns: no hang on the cancelled job
    assert proc.returncode == 1, out[-3000:]  # a cell failed: the sweep says so to CI
    assert "1 of 2 cells failed" in out

    cells = results(sweep)
    assert cells["0"].status == "failed" and cells["0"].error.kind == "interrupted"
    message = cells["0"].error.message
    assert message.startswith("SIGTERM: the job was cancelled (scancel)")
    kept = answered(cell)
    assert f"{kept} answered samples kept in samples/" in message and kept >= 5
    assert_ran_on_slurm(slurm, sweep, cells["0"], state="CANCELLED")
    assert cells["1"].status == "ok"  # the rest of the sweep went on
    assert_ran_on_slurm(slurm, sweep, cells["1"])
    assert processes_mentioning(str(sweep)) == []

    rerun = slurm.mtp_eval("-m", *TWO_CELLS, f"hydra.sweep.dir={sweep}")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    cells = results(sweep)
    assert all(r.status == "ok" for r in cells.values())
    assert cells["0"].evals["mcq_sample"].resumed_samples == kept
    assert cells["1"].resumed[-1].action == "skipped: already ok"
    assert_ran_on_slurm(slurm, sweep, cells["0"])  # the rerun's own job

    uninterrupted = slurm.mtp_eval("-m", *TWO_CELLS, f"hydra.sweep.dir={clean}")
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    resumed_code, resumed_cells = report(slurm, sweep)
    # The resumed cell's server-side accept figures cover only the requests it asked again, and
    # its accept check says so; everything else must read as the uninterrupted sweep's report.
    text = json.dumps(resumed_cells)
    windows = re.findall(
        r" \(server-side figures: the resumed window, (\d+) of 116 requests\)", text
    )
    assert windows == [str(116 - kept)], windows
    window = f" (server-side figures: the resumed window, {116 - kept} of 116 requests)"
    assert (resumed_code, json.loads(text.replace(window, ""))) == report(slurm, clean)


def test_time_limit_warning_stops_the_cell_with_what_it_has(slurm, tmp_path):
    sweep = tmp_path / "timelimit"
    # --time=2 with USR2 55 s ahead: SLURM warns 5-35 s in (it checks about every 30 s and may
    # signal up to 60 s early); the cell alone would need about 100 s.
    proc = slurm.mtp_eval(
        "-m",
        *SMALL_CELLS,
        "backend=fa3",
        "client.concurrency=1",
        "client.follow_server=false",
        "server.simulated.latency_s=0.8",
        "cluster.time_min=2",
        "hydra.launcher.signal_delay_s=55",
        f"hydra.sweep.dir={sweep}",
        timeout=200,
    )
    # Its one cell was stopped before it finished: no cell produced a result, so the sweep exits 1.
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said[-3000:]
    assert "no cell of this sweep produced a result (1 failed)" in said, said[-3000:]
    (result,) = results(sweep).values()
    assert result.status == "failed" and result.error.kind == "interrupted"
    message = result.error.message
    assert message.startswith("SLURM sent SIGUSR2: the job's time limit is near")
    kept = answered(next(sweep.glob("0_*")))
    assert f"{kept} answered samples kept in samples/" in message
    facts = result.provenance.slurm
    job = slurm.settled_job(facts["job"])
    assert job["TimeLimit"] == "00:02:00" and job["JobState"] == "COMPLETED"  # stopped in time
    assert processes_mentioning(str(sweep)) == []


@pytest.mark.parametrize("cells", [["backend=fa3"], ["backend=fa3,fmha_v2"]], ids=["job", "array"])
def test_requests_no_node_can_meet_end_with_one_line(slurm, tmp_path, cells):
    sweep = tmp_path / "too_big"
    started = time.monotonic()
    proc = slurm.mtp_eval(
        "-m",
        "hydra/launcher=slurm",
        "model=deepseek_v3",
        *cells,
        f"hydra.sweep.dir={sweep}",
        timeout=120,
    )
    assert time.monotonic() - started < 60  # no wait for a job that can never start
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mtp-eval:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert (
        "SLURM will never start the sweep's jobs: pending with reason PartitionConfig" in (lines[0])
    )
    assert "--gpus-per-node=8 --cpus-per-task=16 --mem=256GB" in lines[0]  # DeepSeek-V3's tp=8
    assert slurm.run("squeue", "-h").stdout.strip() == ""  # cancelled, nothing left pending


def test_refused_submission_is_one_line(slurm, tmp_path):
    proc = slurm.mtp_eval(
        "-m",
        *SMALL_CELLS,
        "cluster.partition=nosuch",
        f"hydra.sweep.dir={tmp_path / 'refused'}",
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert line.startswith("mtp-eval: SLURM refused the sweep's jobs: Invalid partition name")
    assert "--partition=nosuch" in line


def test_missing_sbatch_is_one_line(slurm, tmp_path):
    bare_path = str(Path(sys.executable).parent)  # python, but no SLURM client
    proc = slurm.run(
        "env",
        f"PATH={bare_path}",
        sys.executable,
        "-m",
        "pipeline",
        "-m",
        *SMALL_CELLS,
        f"hydra.sweep.dir={tmp_path / 'nosbatch'}",
    )
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [CLIENT_MISSING]


def test_cell_cancelled_before_it_ran_is_one_line_and_the_sweep_ends(slurm, tmp_path):
    # No result comes back from such a job, and SLURM forgets a pending array task it cancels
    # (scontrol, and so sacct here, no longer know it): the launcher sees it leave squeue.
    sweep = tmp_path / "pending"
    one_at_a_time = [*TWO_CELLS, "cluster.max_parallel_cells=1", *SLOW]
    proc = slurm.popen_mtp_eval("-m", *one_at_a_time, f"hydra.sweep.dir={sweep}")
    deadline, task = time.monotonic() + 60, None
    while task is None and time.monotonic() < deadline:
        pending = slurm.run("squeue", "-h", "-t", "PENDING", "-o", "%i").stdout.split()
        task = next((f"{job.split('_')[0]}_1" for job in pending if "_" in job), None)
        time.sleep(0.2)
    assert task is not None, "the second cell never showed as pending"
    assert slurm.run("scancel", task).returncode == 0
    out = finish(proc, 180)
    assert proc.returncode == 1, out[-3000:]  # a job left no result: the sweep says so to CI
    assert "1 of 2 cells failed (a job: left no result.json)" in out
    # seen leaving squeue, or reported CANCELLED by sacct: either way one line, and on we go
    assert f"SLURM job {task} ended without a result (" in out
    assert "Traceback" not in out
    assert set(results(sweep)) == {"0"} and results(sweep)["0"].status == "ok"
    code, _ = report(slurm, sweep)
    assert code == 2  # the cancelled cell is missing: undecided, never GO

    rerun = slurm.mtp_eval("-m", *one_at_a_time[:-1], f"hydra.sweep.dir={sweep}")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert {k: r.status for k, r in results(sweep).items()} == {"0": "ok", "1": "ok"}
