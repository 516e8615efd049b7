"""Where a measurement came from: code version, library versions, host, argv and environment."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from pipeline.cluster.slurm_job import job_facts
from pipeline.results.nested_schema import GitJson, HostJson
from pipeline.results.redact import redact_argv, redact_env
from pipeline.results.result_schema import ProvenanceJson

_REPO = Path(__file__).resolve().parents[2]
_PACKAGES = (
    "mtp-eval",
    "sglang",
    "flashinfer-python",
    "torch",
    "sglang-kernel",
    "lm-eval",
    "hydra-core",
    "aiohttp",
)


def now_iso() -> str:
    """Current UTC time, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


COMMIT_ENV = "MTP_EVAL_COMMIT"  # the commit of a copy without .git (the GPU machine's working tree)
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{7,40}")


def commit_problem(env: Mapping[str, str]) -> str | None:
    """Why ``MTP_EVAL_COMMIT`` cannot be recorded as a commit (None: unset, or a commit id)."""
    value = env.get(COMMIT_ENV)
    if value is None or _COMMIT_ID.fullmatch(value):
        return None
    return (
        f"{COMMIT_ENV}={value!r} is not a commit id (7 to 40 hex digits): set it to the "
        f"checkout's `git rev-parse HEAD`, or unset it where git can read the checkout"
    )


def _run_git(repo: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state(repo: Path = _REPO, env: Mapping[str, str] = os.environ) -> GitJson:
    """Commit, dirty flag and their source for the mtp-eval checkout that runs the cell.

    Git says when it can (no ``source`` key: the layout every result had before). A copy of
    the working tree without ``.git`` (what the GPU machine gets) takes the commit from
    ``MTP_EVAL_COMMIT`` (``source: MTP_EVAL_COMMIT``, dirty unknown); with neither, both are None.
    """
    sha = _run_git(repo, "rev-parse", "HEAD")
    named = env.get(COMMIT_ENV) if commit_problem(env) is None else None
    if not sha and named:
        return {"sha": named.lower(), "dirty": None, "source": COMMIT_ENV}
    status = _run_git(repo, "status", "--porcelain", "--untracked-files=no") if sha else None
    return {"sha": sha or None, "dirty": bool(status) if status is not None else None}


def package_versions(names: Sequence[str] = _PACKAGES) -> dict[str, str | None]:
    """Installed versions (from metadata, without importing the packages)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def cuda_driver_version() -> str | None:
    """The CUDA version the driver supports, from nvidia-smi's banner (None without a GPU)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"CUDA Version:\s*([0-9.]+)", out)
    return found.group(1) if found else None


def usable_cpus() -> int | None:
    """How many CPUs this process may run on (its affinity: what the server and client inherit)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count()


def host_facts() -> HostJson:
    """Host name, OS, Python, CUDA and the usable CPUs of the machine running the pipeline."""
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cuda_driver": cuda_driver_version(),
        "cpus": usable_cpus(),
    }


def provenance(argv: Sequence[str], env: Mapping[str, str]) -> ProvenanceJson:
    """Everything that says where a cell's numbers came from, secrets redacted.

    Args:
        argv: the server's full command line.
        env: the variables the pipeline added to the server's environment.
    """
    return {
        "mtp_eval_git": git_state(),
        "packages": package_versions(),
        "host": host_facts(),
        "pipeline_argv": redact_argv(sys.argv),
        "server_argv": redact_argv(argv),
        "server_env": redact_env(dict(env)),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "slurm": job_facts(os.environ),  # job id, array task, nodes; None outside SLURM
    }
