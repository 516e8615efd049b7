"""One-line messages for what SLURM refused or lost (pure: text in, text out)."""

from __future__ import annotations

import re
from pathlib import Path

# The #SBATCH resources a cell asks for, in the order a user reads them.
_RESOURCES = (
    "partition",
    "account",
    "qos",
    "nodes",
    "ntasks-per-node",
    "gpus-per-node",
    "cpus-per-task",
    "mem",
    "time",
)


CLIENT_MISSING = (
    "mtp-eval: SLURM's client commands (sbatch, srun) are not on PATH: hydra/launcher=slurm runs "
    "where they are (a cluster's login node), hydra/launcher=local anywhere"
)


def asked_resources(script: str) -> str:
    """``--gpus-per-node=8 --cpus-per-task=16 ...`` from a submission script's #SBATCH lines."""
    found = dict(re.findall(r"^#SBATCH --([\w-]+)=(\S+)", script, flags=re.MULTILINE))
    return " ".join(f"--{key}={found[key]}" for key in _RESOURCES if key in found)


def sbatch_reason(stderr: str) -> str:
    """SLURM's own reason from sbatch's error output (the last ``error:`` line, prefix cut)."""
    errors: list[str] = re.findall(r"error:\s*(.+)", stderr)
    if not errors:
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        return lines[-1] if lines else "no message"
    return errors[-1].replace("Batch job submission failed: ", "").strip()


def submission_failure(stderr: str, folder: Path) -> str:
    """The one line for a sweep whose ``sbatch`` failed.

    Args:
        stderr: what sbatch (or the OS, when it is not installed) said.
        folder: the sweep's ``.submitit`` folder, where submitit left the submission script.
    """
    if "No such file or directory" in stderr and "sbatch" in stderr:
        return CLIENT_MISSING
    scripts = sorted(folder.glob(".submission_file_*.sh"), key=lambda p: p.stat().st_mtime)
    asked = asked_resources(scripts[-1].read_text()) if scripts else ""
    where = f" (each cell asked {asked}; script {scripts[-1]})" if scripts else ""
    return (
        f"mtp-eval: SLURM refused the sweep's jobs: {sbatch_reason(stderr)}{where}; fit "
        "model.tp, cluster.cpus_per_task, cluster.mem_gb, cluster.time_min or cluster.partition "
        "to the cluster's nodes (sinfo -o '%P %c %m %G %l')"
    )


# squeue reasons of a pending job that waiting cannot cure: the job asks for more than any node
# of the partition has, or more than the partition, account or QOS allows any one job.
HOPELESS_REASONS = (
    "PartitionConfig",
    "PartitionNodeLimit",
    "PartitionTimeLimit",
    "BadConstraints",
    "InvalidAccount",
    "InvalidQOS",
    "QOSMaxGRESPerJob",
    "QOSMaxCpuPerJobLimit",
    "QOSMaxMemoryPerJob",
    "QOSMaxWallDurationPerJobLimit",
    "AssocMaxGRESPerJob",
    "AssocMaxCpuPerJobLimit",
    "AssocMaxWallDurationPerJobLimit",
)


def hopeless_reason(squeue: str) -> str | None:
    """The first never-resolving pending reason in ``squeue -h -o '%i|%T|%r'`` output."""
    for line in squeue.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[1] == "PENDING" and parts[2] in HOPELESS_REASONS:
            return parts[2]
    return None


def listed_tasks(squeue: str) -> set[str]:
    """Job ids squeue still lists (``%i``), array ranges expanded: ``12_[1-3,5%2]`` -> 12_1..."""
    listed: set[str] = set()
    for line in squeue.splitlines():
        job = line.strip().split("|")[0]
        ranged = re.fullmatch(r"(\d+)_\[([\d,-]+)(?:%\d+)?\]", job)
        if ranged is None:
            listed.add(job)
            continue
        for part in ranged.group(2).split(","):
            low, _, high = part.partition("-")
            listed.update(f"{ranged.group(1)}_{i}" for i in range(int(low), int(high or low) + 1))
    return listed


def never_starts(reason: str, array_id: str, script: Path | None) -> str:
    """The one line for a sweep whose jobs SLURM accepted but will never start."""
    asked = f" (each cell asked {asked_resources(script.read_text())})" if script else ""
    return (
        f"mtp-eval: SLURM will never start the sweep's jobs: pending with reason {reason}{asked}; "
        f"cancelled job {array_id}. Fit model.tp, cluster.cpus_per_task, cluster.mem_gb, "
        "cluster.time_min, cluster.partition or cluster.qos to what the cluster allows "
        "(sinfo -o '%P %c %m %G %l')"
    )


def lost_job_line(num: int, cell: str, job_id: str, error: str) -> str:
    """The one line for a cell whose SLURM job ended without handing back a result."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    detail = lines[-1] if lines else "no detail"
    return (
        f"mtp-eval: cell #{num} ({cell}): SLURM job {job_id} ended without a result "
        f"({detail[:200]}); the report lists it as missing and a rerun of the sweep runs it"
    )
