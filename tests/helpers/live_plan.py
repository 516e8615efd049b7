"""Rehearse a plan of ``benchmarks/live_h200/live_signoff.sh`` on the simulated server."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from tests.helpers.cells import REPO

SCRIPT = REPO / "benchmarks" / "live_h200" / "live_signoff.sh"


def run_live_plan(
    tmp_path: Path, plan: str, args: list[str], timeout_s: int, **env: str
) -> subprocess.CompletedProcess[str]:
    """``live_signoff.sh ARGS`` under ``LIVE_PLAN=plan`` on SGLang 0.5.23's simulated server.

    The tick's folders are ``tmp_path/live`` and ``tmp_path/repo`` (outputs land there); ``env``
    adds or overrides variables (``LIVE_REPEATS``, ...).
    """
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "live").mkdir(exist_ok=True)  # the tick makes it before any phase
    variables = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # python3
        # The host's repo copy ($R) is where `python3 -m benchmarks...` finds the scripts; here
        # $R is an empty folder, so the checkout stands in for it.
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
        "LIVE": str(tmp_path / "live"),
        "MTP_REPO": str(tmp_path / "repo"),
        "LIVE_PLAN": plan,
        "LIVE_SERVER": "simulated",
        "LIVE_SGLANG": "0.5.23",
        **env,
    }
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=REPO, env=variables, capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


def longctx_model_chunks(tmp_path: Path) -> Path:
    """A tiny untrained target (and a copy as the draft), tarred as the plan's return is, cut."""
    from benchmarks.live_h200.train_longctx import make_target, save_target

    model = make_target("cpu", 0)
    for part in ("target", "draft"):
        save_target(model, tmp_path / "model" / "longctx" / part)
    tar = tmp_path / "longctx-model.tar"
    with tarfile.open(tar, "w") as out:
        out.add(tmp_path / "model" / "longctx", arcname="longctx")
    chunks = tmp_path / "chunks"
    split = [sys.executable, str(REPO / "benchmarks" / "live_h200" / "chunks.py"), "split",
             str(tar), str(chunks), "--chunk-mib", "0.5"]  # fmt: skip
    subprocess.run(split, check=True, capture_output=True)
    return chunks


def step_rc(live: Path, name: str) -> str | None:
    """A plan step's exit code as its state file records it (None: not ended yet)."""
    path = live / "state" / f"{name}.rc"
    return path.read_text().strip() if path.is_file() else None


def tick_until(tmp_path: Path, plan: str, names: tuple[str, ...], **env: str) -> None:
    """Ticks of 0 s, every 2 s, until every NAME ended (a lease's polling, shortened)."""
    deadline = time.monotonic() + 400
    while any(step_rc(tmp_path / "live", n) is None for n in names):
        assert time.monotonic() < deadline, [(n, step_rc(tmp_path / "live", n)) for n in names]
        run = run_live_plan(tmp_path, plan, ["tick", "0"], 120, **env)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        time.sleep(2)
