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

from pipeline.slurm_job import install_stop_handlers
from pipeline.slurm_messages import (
    CLIENT_MISSING,
    hopeless_reason,
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
        self._wait(jobs)
        return [
            self._collect(job, n, o) for job, n, o in zip(jobs, nums, job_overrides, strict=True)
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

    def _wait(self, jobs: list[Any]) -> None:
        """Wait for every job; cancel the sweep when SLURM says its jobs can never start.

        A job array asking more than any node has is accepted by sbatch and pends for ever
        (reason ``PartitionConfig``); so do requests over a partition's or QOS's limits.
        """
        array_id = str(jobs[0].job_id).split("_")[0]
        while not all(job.done() for job in jobs):
            squeue = subprocess.run(
                ["squeue", "-h", "-j", array_id, "-o", "%i|%T|%r"],
                capture_output=True,
                text=True,
                check=False,
            )
            reason = hopeless_reason(squeue.stdout)
            if reason is not None:
                subprocess.run(["scancel", array_id], check=False)
                scripts = Path(jobs[0].paths.folder).parent.glob(f"*/{array_id}_submission.sh")
                script = next(scripts, None)
                print(never_starts(reason, array_id, script), file=sys.stderr)
                raise SystemExit(SUBMISSION_FAILED)
            time.sleep(WATCH_S)

    def _collect(self, job: Any, num: int, overrides: Sequence[str]) -> JobReturn:
        import submitit

        try:
            result: JobReturn = job.results()[0]
            return result
        except submitit.core.utils.UncompletedJobError as err:
            cell = " ".join(filter_overrides(overrides))
            print(lost_job_line(num, cell, job.job_id, job.state, str(err)), file=sys.stderr)
            return JobReturn(
                overrides=list(overrides),
                status=JobStatus.COMPLETED,  # a FAILED return would end the whole sweep
                _return_value=f"no result: SLURM job {job.job_id} {job.state}",
            )
