"""``hydra/launcher=slurm``: Hydra's submitit SLURM launcher, made to finish a sweep cleanly.

hydra-submitit-launcher 1.2 stops at the first job without a result (cancelled before it ran,
killed by SLURM) with a traceback while the other jobs run on, and turns a refused submission
(an ``sbatch`` error) into a long traceback. This subclass submits the same job array, then:
a refused submission is one line naming SLURM's reason and the resources each cell asked for
(exit code 2); a job that ended without a result is one line naming the cell, its job id and
SLURM's state, and the sweep goes on (the report lists the cell as missing; a rerun runs it).
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from hydra_plugins.hydra_submitit_launcher import submitit_launcher
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from omegaconf import OmegaConf

from pipeline.cluster.slurm_job import install_stop_handlers
from pipeline.cluster.slurm_messages import (
    CLIENT_MISSING,
    hopeless_reason,
    listed_tasks,
    lost_job_line,
    never_starts,
    submission_failure,
)

SUBMISSION_FAILED = 2
WATCH_S = 5.0  # how often the launcher asks squeue whether pending jobs can ever start


class SlurmLauncher(submitit_launcher.SlurmLauncher):
    """One SLURM array task per cell; every cell gets a ``JobReturn``, whatever SLURM did."""

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        """Submit one array task per cell and collect every result (Hydra's Launcher API)."""
        import submitit

        assert self.config is not None
        try:
            executor = self._executor()
        except RuntimeError:  # submitit's check: 'Could not detect "srun"'
            print(CLIENT_MISSING, file=sys.stderr)
            raise SystemExit(SUBMISSION_FAILED) from None
        folder = Path(str(self.params["submitit_folder"])).parent  # the array's own files
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        nums = [initial_job_idx + i for i in range(len(job_overrides))]
        params = [
            (list(o), "hydra.sweep.dir", n, f"job_id_for_{n}", Singleton.get_state())
            for n, o in zip(nums, job_overrides, strict=True)
        ]
        echoed = io.StringIO()  # submitit prints sbatch's stderr itself; it goes into our line
        try:
            with contextlib.redirect_stderr(echoed):
                jobs = executor.map_array(self, *zip(*params, strict=True))
        except (submitit.core.utils.FailedJobError, OSError) as err:
            print(submission_failure(str(err) or echoed.getvalue(), folder), file=sys.stderr)
            raise SystemExit(SUBMISSION_FAILED) from None
        lost = self._wait(jobs)
        return [
            self._collect(job, n, o, lost.get(job.job_id))
            for job, n, o in zip(jobs, nums, job_overrides, strict=True)
        ]

    def __call__(self, *args: Any, **kwargs: Any) -> JobReturn:
        """Run one cell inside its SLURM job (submitit calls this there).

        The cell's stop handlers go in first thing: with a short ``--time`` SLURM may send the
        USR2 warning within the job's first seconds, and submitit's own handler would then
        abandon the job without a result.
        """
        install_stop_handlers()
        result: JobReturn = super().__call__(*args, **kwargs)
        return result

    def _executor(self) -> Any:
        """The submitit SLURM executor with these parameters (as Hydra's launcher builds it)."""
        import submitit

        init = {"folder": self.params["submitit_folder"]}
        if "max_num_timeout" in self.params:
            init["slurm_max_num_timeout"] = self.params["max_num_timeout"]
        executor = submitit.AutoExecutor(cluster="slurm", **init)
        base = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(
            **{
                key if key in base else f"slurm_{key}": value
                for key, value in self.params.items()
                if key not in ("submitit_folder", "max_num_timeout")
            }
        )
        return executor

    def _wait(self, jobs: list[Any]) -> dict[str, str]:
        """Wait for every job; returns the jobs that ended without a result, with what is known.

        Asks squeue every ``WATCH_S``: a job array asking more than any node has is accepted
        by sbatch and pends for ever (reason ``PartitionConfig``), so do requests over a
        partition's or QOS's limits: the sweep is then cancelled. A job squeue no longer lists
        and that left no result (cancelled before it started, killed) has ended: without
        accounting, submitit itself would never learn that and wait for ever.
        """
        array_id = str(jobs[0].job_id).split("_")[0]
        lost: dict[str, str] = {}
        while waiting := [j for j in jobs if j.job_id not in lost and not j.done()]:
            squeue = subprocess.run(
                ["squeue", "-h", "-j", array_id, "-o", "%i|%T|%r"],
                capture_output=True,
                text=True,
                check=False,
            )
            if squeue.returncode == 0:  # a controller that does not answer proves nothing
                self._stop_if_hopeless(squeue.stdout, array_id, jobs[0])
                listed = listed_tasks(squeue.stdout)
                for job in waiting:
                    if job.job_id not in listed and not Path(job.paths.result_pickle).exists():
                        lost[job.job_id] = "no longer queued: cancelled before it ran, or killed"
            time.sleep(WATCH_S)
        return lost

    def _stop_if_hopeless(self, squeue: str, array_id: str, first: Any) -> None:
        reason = hopeless_reason(squeue)
        if reason is not None:
            subprocess.run(["scancel", array_id], check=False)
            scripts = Path(first.paths.folder).parent.glob(f"*/{array_id}_submission.sh")
            print(never_starts(reason, array_id, next(scripts, None)), file=sys.stderr)
            raise SystemExit(SUBMISSION_FAILED)

    def _collect(self, job: Any, num: int, overrides: Sequence[str], lost: str | None) -> JobReturn:
        import submitit

        try:
            if lost is None:
                result: JobReturn = job.results()[0]
                return result
        except submitit.core.utils.UncompletedJobError as err:
            lost = str(err)
        cell = " ".join(filter_overrides(overrides))
        print(lost_job_line(num, cell, job.job_id, lost or ""), file=sys.stderr)
        return JobReturn(
            overrides=list(overrides),
            status=JobStatus.COMPLETED,  # a FAILED return would end the whole sweep
            _return_value=f"no result: SLURM job {job.job_id}",
        )
