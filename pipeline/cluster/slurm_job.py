"""A cell inside a SLURM job: which job it is, and how it stops when SLURM says so.

SLURM stops a job with SIGTERM (``scancel``, preemption, the time limit) and, when the launcher
asks for it (``hydra.launcher.signal_delay_s``), with SIGUSR2 that many seconds before the time
limit. Either one raises :class:`StopSignal` in the cell: every ``finally`` runs, the server is
stopped, ``result.json`` says ``failed`` / ``interrupted`` with the reason and the answered
samples stay on disk for a rerun. In a submitit job (one cell per process) the cell then returns
normally, so the job hands Hydra a result and the sweep goes on.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from types import FrameType

_JOB_KEYS = {
    "job_id": "SLURM_JOB_ID",
    "array_job_id": "SLURM_ARRAY_JOB_ID",
    "array_task_id": "SLURM_ARRAY_TASK_ID",
    "cluster": "SLURM_CLUSTER_NAME",
    "partition": "SLURM_JOB_PARTITION",
    "nodelist": "SLURM_JOB_NODELIST",
    "ntasks": "SLURM_NTASKS",
    "procid": "SLURM_PROCID",
    "restart_count": "SLURM_RESTART_COUNT",
    "gpus_on_node": "SLURM_GPUS_ON_NODE",
}

_REASONS = {
    signal.SIGUSR2: "SLURM sent SIGUSR2: the job's time limit is near "
    "(hydra.launcher.signal_delay_s before it) or the job is being preempted",
    signal.SIGTERM: "SIGTERM: the job was cancelled (scancel), preempted or reached its time limit",
}


class StopSignal(SystemExit):
    """SLURM (or a user) asked this process to stop; ``reason`` says who and why."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum
        self.reason = _REASONS.get(signal.Signals(signum), f"signal {signal.Signals(signum).name}")


def job_facts(env: Mapping[str, str]) -> dict[str, str] | None:
    """The SLURM job this process runs in (ids, node list), None outside SLURM.

    ``job`` is the id that ``scontrol show job`` and ``sacct -j`` take: ``ARRAY_TASK`` for an
    array task (Hydra's sweeps are arrays), else the job id.
    """
    if "SLURM_JOB_ID" not in env:
        return None
    facts = {key: env[name] for key, name in _JOB_KEYS.items() if name in env}
    array, task = facts.get("array_job_id"), facts.get("array_task_id")
    facts["job"] = f"{array}_{task}" if array and task else facts["job_id"]
    return facts


def in_submitit_job(env: Mapping[str, str]) -> bool:
    """True in a cell that submitit started as its own job (SLURM or submitit_local)."""
    return bool(env.get("SUBMITIT_FOLDER"))


def raise_stop(signum: int, frame: FrameType | None) -> None:
    """Signal handler: turn SIGTERM / SIGUSR2 into :class:`StopSignal` (every ``finally`` runs).

    Only the first one: SLURM's SIGTERM often comes twice (from slurmstepd and forwarded by
    srun), and USR2 is followed by SIGTERM at the time limit; a second exception raised inside
    the clean-up would cut it short and lose ``result.json``.
    """
    for sig in (signal.SIGTERM, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)
    raise StopSignal(signum)


def install_stop_handlers() -> None:
    """SIGTERM always; SIGUSR2 in a SLURM job, where it replaces submitit's requeue handler.

    submitit's own handlers ignore SIGTERM (the job then runs on until SLURM's SIGKILL) and
    requeue or abandon the job on SIGUSR2; a cell instead stops, keeps what it measured and
    reports it, and the sweep's rerun resumes it.
    """
    signal.signal(signal.SIGTERM, raise_stop)
    if "SLURM_JOB_ID" in os.environ:
        signal.signal(signal.SIGUSR2, raise_stop)
