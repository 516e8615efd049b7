"""A cell's view of its SLURM job: ids for provenance, and the stop signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from pipeline.cluster.slurm_job import StopSignal, in_submitit_job, job_facts


def test_outside_slurm_there_are_no_facts():
    assert job_facts({"PATH": "/bin"}) is None


def test_array_task_is_named_as_scontrol_takes_it():
    env = {
        "SLURM_JOB_ID": "16",
        "SLURM_ARRAY_JOB_ID": "15",
        "SLURM_ARRAY_TASK_ID": "1",
        "SLURM_JOB_NODELIST": "gpu[01-02]",
        "SLURM_PROCID": "0",
        "UNRELATED": "x",
    }
    assert job_facts(env) == {
        "job_id": "16",
        "array_job_id": "15",
        "array_task_id": "1",
        "nodelist": "gpu[01-02]",
        "procid": "0",
        "job": "15_1",
    }


def test_plain_job_is_its_job_id():
    assert job_facts({"SLURM_JOB_ID": "7", "SLURM_NTASKS": "2"}) == {
        "job_id": "7",
        "ntasks": "2",
        "job": "7",
    }


@pytest.mark.parametrize(
    ("signum", "start"),
    [
        (signal.SIGUSR2, "SLURM sent SIGUSR2: the job's time limit is near"),
        (signal.SIGTERM, "SIGTERM: the job was cancelled (scancel)"),
    ],
)
def test_stop_signal_says_why_and_exits_like_the_signal(signum, start):
    stop = StopSignal(signum)
    assert isinstance(stop, SystemExit) and stop.code == 128 + signum
    assert stop.reason.startswith(start)


def test_submitit_job_is_told_by_its_folder_variable():
    assert in_submitit_job({"SUBMITIT_FOLDER": "/sweep/.submitit/%j"})
    assert not in_submitit_job({})


def test_only_the_first_stop_signal_interrupts():
    # SLURM's SIGTERM can come twice (slurmstepd, and srun forwarding it): the second must not
    # cut short the clean-up that the first started. A real process, real signals.
    code = textwrap.dedent(
        """
        import os, signal, time
        from pipeline.cluster.slurm_job import StopSignal, install_stop_handlers
        os.environ["SLURM_JOB_ID"] = "1"
        install_stop_handlers()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except StopSignal as stop:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGUSR2)
            time.sleep(0.2)
            print("cleaned up after", stop.signum)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert out.stdout.strip() == f"cleaned up after {int(signal.SIGTERM)}", out.stderr
