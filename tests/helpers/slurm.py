"""The test SLURM's handle and checks on what SLURM itself ran (for the ``slurm`` tier)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.results.result_types import CellResult
from tests.helpers.cells import REPO, result_of

CLUSTER = REPO / ".ci" / "slurm" / "cluster"
# Cells that fit the test node (2 CPUs, 2 counted GPUs): one CPU and 1 GB each.
SMALL_CELLS = [
    "hydra/launcher=slurm",
    "cluster.cpus_per_task=1",
    "cluster.mem_gb=1",
    "cluster.time_min=10",
    "client.progress=false",
    "server.simulated.startup_delay_s=0.1",
]


@dataclass(frozen=True)
class Slurm:
    """A running test SLURM: its folder and the environment that reaches it."""

    folder: Path
    env: dict[str, str]

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), env=self.env, cwd=REPO, text=True, capture_output=True, timeout=timeout
        )

    def mtp_eval(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "pipeline", *args, timeout=timeout)

    def popen_mtp_eval(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "pipeline", *args],
            env=self.env,
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def job(self, job_id: str) -> dict[str, str]:
        """SLURM's own record of a job (`scontrol -o show job`), as key=value pairs."""
        out = self.run("scontrol", "-o", "show", "job", job_id)
        assert out.returncode == 0, f"SLURM has no job {job_id}: {out.stderr}"
        return dict(re.findall(r"(\w+)=(\S*)", out.stdout.splitlines()[0]))

    def settled_job(self, job_id: str, timeout: float = 90) -> dict[str, str]:
        """The job's record once SLURM has seen its batch step exit.

        submitit hands the result back (and Hydra returns) as soon as the job has pickled it; the
        job's process then still has to exit, which takes seconds on a loaded 2-core machine, and
        until it does SLURM says RUNNING or COMPLETING.
        """
        deadline = time.monotonic() + timeout
        job = self.job(job_id)
        while job["JobState"] in ("RUNNING", "COMPLETING") and time.monotonic() < deadline:
            time.sleep(0.5)
            job = self.job(job_id)
        return job


def results(sweep: Path) -> dict[str, CellResult]:
    """Cell results by job number (the folder name's prefix)."""
    return {
        p.parent.name.split("_", 1)[0]: result_of(p.parent) for p in sweep.glob("*/result.json")
    }


def assert_ran_on_slurm(slurm: Slurm, sweep: Path, result: CellResult, state: str = "COMPLETED"):
    """The cell's recorded job is a job of this sweep that SLURM ran to ``state``."""
    facts = result.provenance.slurm
    assert facts and facts["nodelist"] == "localhost", facts
    job = slurm.settled_job(facts["job"])
    assert job["JobState"] == state, job
    assert job["NodeList"] == "localhost"
    assert job["StdOut"].startswith(str(sweep / ".submitit")), job["StdOut"]


def report(slurm: Slurm, sweep: Path) -> tuple[int, list[dict]]:
    """mtp-eval-report's exit code and its cells, less what differs between two runs of a sweep
    (times, and the command-line overrides: the launcher's own settings are among them)."""
    proc = slurm.run(sys.executable, "-m", "pipeline.report.cli", str(sweep), timeout=180)
    text = (sweep / "report" / "summary.json").read_text().replace(str(sweep), "<SWEEP>")
    cells = json.loads(text)["cells"]
    for cell in cells:
        for key in ("started_at", "ended_at", "timing", "overrides"):
            cell.pop(key, None)
    return proc.returncode, sorted(cells, key=lambda c: json.dumps(c, sort_keys=True))
