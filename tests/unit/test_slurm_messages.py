"""The one-line messages for what SLURM refused, could never start, or lost (pure functions)."""

from __future__ import annotations

import pytest

from pipeline.cluster.slurm_messages import (
    CLIENT_MISSING,
    asked_resources,
    hopeless_reason,
    listed_tasks,
    lost_job_line,
    never_starts,
    sbatch_reason,
    submission_failure,
)

SCRIPT = """#!/bin/bash
#SBATCH --array=0-1%2
#SBATCH --cpus-per-task=16
#SBATCH --gpus-per-node=8
#SBATCH --job-name=cli
#SBATCH --mem=256GB
#SBATCH --nodes=1
#SBATCH --partition=gpu
#SBATCH --time=240
srun python -u -m submitit.core._submit /x
"""


def test_asked_resources_in_reading_order():
    assert asked_resources(SCRIPT) == (
        "--partition=gpu --nodes=1 --gpus-per-node=8 --cpus-per-task=16 --mem=256GB --time=240"
    )


@pytest.mark.parametrize(
    ("stderr", "reason"),
    [
        (
            "sbatch: error: Memory specification can not be satisfied\nsbatch: error: Batch job "
            "submission failed: Requested node configuration is not available",
            "Requested node configuration is not available",
        ),
        (
            "sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job "
            "submission failed: Invalid partition name specified",
            "Invalid partition name specified",
        ),
        ("something odd\n\n", "something odd"),
        ("", "no message"),
    ],
)
def test_sbatch_reason_is_slurms_last_word(stderr, reason):
    assert sbatch_reason(stderr) == reason


def test_submission_failure_names_reason_resources_and_script(tmp_path):
    (tmp_path / ".submission_file_ab.sh").write_text(SCRIPT)
    line = submission_failure("sbatch: error: Batch job submission failed: Access denied", tmp_path)
    assert "\n" not in line
    assert line.startswith("mtp-eval: SLURM refused the sweep's jobs: Access denied (each cell ")
    assert "--gpus-per-node=8" in line and str(tmp_path / ".submission_file_ab.sh") in line


def test_submission_failure_without_sbatch_or_script(tmp_path):
    missing = "[Errno 2] No such file or directory: 'sbatch'"
    assert submission_failure(missing, tmp_path) == CLIENT_MISSING
    line = submission_failure("sbatch: error: Slurm controller not responding", tmp_path)
    assert "Slurm controller not responding;" in line and "each cell asked" not in line


@pytest.mark.parametrize(
    ("squeue", "reason"),
    [
        ("12_[0-1%2]|PENDING|PartitionConfig\n", "PartitionConfig"),
        ("12_0|RUNNING|None\n12_1|PENDING|QOSMaxGRESPerJob\n", "QOSMaxGRESPerJob"),
        ("12_[0-3]|PENDING|Resources\n", None),  # waits for a busy node: it will start
        ("12_0|PENDING|Priority\n", None),
        ("12_0|COMPLETED|PartitionConfig\n", None),
        ("", None),
    ],
)
def test_hopeless_reason_only_for_pending_jobs_that_can_never_start(squeue, reason):
    assert hopeless_reason(squeue) == reason


def test_never_starts_line(tmp_path):
    script = tmp_path / "12_submission.sh"
    script.write_text(SCRIPT)
    line = never_starts("PartitionConfig", "12", script)
    assert line.startswith(
        "mtp-eval: SLURM will never start the sweep's jobs: pending with reason PartitionConfig "
        "(each cell asked --partition=gpu"
    )
    assert "cancelled job 12." in line and "\n" not in line
    assert "each cell asked" not in never_starts("InvalidQOS", "12", None)


def test_lost_job_line_names_cell_job_state_and_last_error_line():
    error = "Job 12_1 (task: 0) with path /x\nhas not produced any output (state: CANCELLED)\n"
    line = lost_job_line(1, "backend=fa3 kv_dtype=auto", "12_1", error)
    assert line == (
        "mtp-eval: cell #1 (backend=fa3 kv_dtype=auto): SLURM job 12_1 ended without a "
        "result (has not produced any output (state: CANCELLED)); the report lists it as missing "
        "and a rerun of the sweep runs it"
    )


@pytest.mark.parametrize(
    ("squeue", "listed"),
    [
        ("12_[1-3%1]|PENDING|None\n12_0|RUNNING|None\n", {"12_0", "12_1", "12_2", "12_3"}),
        ("12_[2,4-5]|PENDING|Resources\n", {"12_2", "12_4", "12_5"}),
        ("13|RUNNING|None\n", {"13"}),
        ("", set()),
    ],
)
def test_listed_tasks_expands_pending_array_ranges(squeue, listed):
    assert listed_tasks(squeue) == listed
