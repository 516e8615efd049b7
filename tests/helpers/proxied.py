"""Run the installed ``mtp-eval`` against a simulated server, through ``fault_proxy`` if asked."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.helpers.cells import REPO, console_script
from tests.helpers.sim import free_port, status

FAST = [
    "server.simulated.startup_delay_s=0.2",
    "client.progress=false",
    "server.stop_grace_s=5",
    "server.startup_timeout_s=30",
    "client.retry_backoff_s=0.01",
    "client.request_timeout_s=20",
]


@contextlib.contextmanager
def fault_proxy(folder: Path, upstreams: list[str], *rules: str) -> Iterator[str]:
    """A ``tests.helpers.fault_proxy`` process in front of ``upstreams``; yields its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = [sys.executable, "-m", "tests.helpers.fault_proxy", "--port", str(port)]
    argv += [arg for url in upstreams for arg in ("--upstream", url)]
    argv += [*rules, "--ledger", str(folder / "proxy-ledger.jsonl")]
    with (folder / "proxy.log").open("wb") as log:
        proc = subprocess.Popen(
            argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while status(url + "/health") != 200:
            assert proc.poll() is None and time.monotonic() < deadline, folder / "proxy.log"
            time.sleep(0.05)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def proxy_faults(folder: Path) -> list[str]:
    """The fault of each chat request the proxy saw (None where it forwarded it untouched)."""
    lines = (folder / "proxy-ledger.jsonl").read_text().splitlines()
    return [json.loads(line)["fault"] for line in lines if json.loads(line)["fault"]]


def mtp_eval(*overrides: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """The installed ``mtp-eval`` with ``overrides``, output captured."""
    return subprocess.run(
        [console_script("mtp-eval"), *overrides],
        cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def external(url: str, *more: str) -> list[str]:
    """Overrides of a cell that measures the running server at ``url``."""
    return [*FAST, "server=external", f"server.base_url={url}", "gpu=h200", *more]


def read_json(path: Path) -> Any:
    """A JSON file, decoded."""
    return json.loads(path.read_text())
