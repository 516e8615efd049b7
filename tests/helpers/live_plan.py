"""Rehearse a plan of ``benchmarks/live_h200/live_signoff.sh`` on the simulated server."""

from __future__ import annotations

import os
import subprocess
import sys
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
