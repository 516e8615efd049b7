"""The server process of a cell: launch, wait until healthy, stop with nothing left behind.

The server runs in its own session (so in its own process group) with its output in the cell's
``server.log``. Stopping sends SIGTERM to the group, waits a grace period, sends SIGKILL, then kills
any descendant that left the group. The same code drives real SGLang and the simulated server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from pipeline.results.redact import redact_text
from pipeline.serving.waiting import WAIT_PROGRESS_S

HEALTH_PATH = "/health_generate"


class ServerStartError(RuntimeError):
    """The server exited or never became healthy; the message says how and shows the log tail."""

    def __init__(
        self,
        reason: str,
        argv: Sequence[str],
        exit_code: int | None,
        log_tail: str,
        timed_out: bool,
    ) -> None:
        self.reason, self.argv, self.exit_code = reason, list(argv), exit_code
        self.log_tail, self.timed_out = log_tail, timed_out
        super().__init__(
            f"{reason}\n  exit code: {exit_code}\n  argv: {shlex.join(argv)}\n"
            f"  last lines of the server log:\n{_indent(log_tail)}"
        )


class ExternalServerError(RuntimeError):
    """``server=external``: nothing healthy answered at the URL within the bounded wait."""


@dataclass(frozen=True)
class HealthPolicy:
    """How long and how often to poll the health endpoint, and how often to say so."""

    timeout_s: float
    initial_s: float = 0.2
    max_s: float = 5.0
    report_every_s: float | None = None  # a progress line (elapsed, last log line); None: quiet
    secrets: tuple[str, ...] = ()  # masked in that line (SGLang logs its server_args, keys too)


@dataclass
class RunningServer:
    """A server that answered its health check."""

    base_url: str
    process: subprocess.Popen[bytes] | None
    log_path: Path | None
    argv: list[str]
    ready_s: float  # seconds from launch to the first healthy answer
    prestarted: bool = False  # launched before its cell ran (server.prestart_next)


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def tail(path: Path | None, lines: int = 50) -> str:
    """Last ``lines`` lines of a log file ('' if it does not exist)."""
    if path is None or not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 64_000))
        text = fh.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def probe_health(base_url: str, timeout_s: float = 5.0, path: str = HEALTH_PATH) -> int | None:
    """HTTP status of the health endpoint (or ``path``), or None when nothing answers."""
    try:
        with urllib.request.urlopen(base_url + path, timeout=timeout_s) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)
    except (OSError, TimeoutError):
        return None


def wait_healthy(
    base_url: str,
    policy: HealthPolicy,
    process: subprocess.Popen[bytes] | None = None,
    argv: Sequence[str] = (),
    log_path: Path | None = None,
) -> float:
    """Poll the health endpoint with back-off until it answers 200.

    Returns:
        Seconds waited.

    Raises:
        ServerStartError: the process exited, or the deadline passed.
    """
    start = time.monotonic()
    delay = policy.initial_s
    reported = start
    while True:
        if process is not None and process.poll() is not None:
            raise ServerStartError(
                "the server exited before it became healthy",
                argv,
                process.returncode,
                tail(log_path),
                timed_out=False,
            )
        left = policy.timeout_s - (time.monotonic() - start)
        longest = min(20.0, policy.report_every_s or 20.0)  # a probe never outlasts a line
        if probe_health(base_url, timeout_s=min(longest, max(0.5, left))) == 200:
            return time.monotonic() - start
        now = time.monotonic()
        if policy.report_every_s is not None and now - reported >= policy.report_every_s:
            line = startup_progress(base_url, now - start, policy.timeout_s, log_path)
            print(redact_text(line, policy.secrets), flush=True)
            reported = now
        if now - start > policy.timeout_s:
            raise ServerStartError(
                f"the server was not healthy after {policy.timeout_s:.0f} s "
                f"(raise server.startup_timeout_s if it is still compiling kernels)",
                argv,
                None,
                tail(log_path),
                timed_out=True,
            )
        time.sleep(delay)
        delay = min(delay * 1.5, policy.max_s)


def startup_progress(base_url: str, elapsed_s: float, timeout_s: float, log: Path | None) -> str:
    """One line while a server starts: how long so far, of how long, and its last log line."""
    last = tail(log, 1).strip() if log is not None else ""
    said = f"; last log line: {last[:200]}" if last else ""
    return f"waiting for the server at {base_url}: {elapsed_s:.0f} s of {timeout_s:.0f} s{said}"


def launch(argv: Sequence[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session with stdout and stderr going to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(argv),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the process group, SIGKILL it after ``grace_s``, then sweep stray descendants."""
    descendants = _descendants(process.pid)
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)
    _signal_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    for child in descendants + _descendants(process.pid):
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(descendants, timeout=5)


@contextlib.contextmanager
def managed_server(
    argv: Sequence[str],
    env: dict[str, str],
    base_url: str,
    log_path: Path,
    policy: HealthPolicy,
    grace_s: float,
    running: tuple[subprocess.Popen[bytes], float] | None = None,
) -> Iterator[RunningServer]:
    """Run a server for the duration of a ``with`` block; it is stopped on every exit path.

    ``running``: the process and ``time.monotonic()`` launch time of this very ``argv`` started
    earlier (``server.prestart_next``), waited for and stopped here as if launched here.
    """
    process, started = running or (launch(argv, env, log_path), time.monotonic())
    try:
        wait_healthy(base_url, policy, process, argv, log_path)
        ready_s = time.monotonic() - started
        yield RunningServer(base_url, process, log_path, list(argv), ready_s, running is not None)
    finally:
        stop(process, grace_s)


@contextlib.contextmanager
def external_server(base_url: str, policy: HealthPolicy) -> Iterator[RunningServer]:
    """A server someone else runs: check that it is healthy within ``policy``, never stop it.

    Raises:
        ExternalServerError: nothing healthy answered at ``base_url`` in time (the URL and the
            key to raise are in the message).
    """
    every_s = min(policy.report_every_s or WAIT_PROGRESS_S, WAIT_PROGRESS_S)  # nothing to compile
    policy = dataclasses.replace(policy, report_every_s=every_s)
    try:
        waited = wait_healthy(base_url, policy, argv=[f"(external server at {base_url})"])
    except ServerStartError as err:
        raise ExternalServerError(
            f"server=external: nothing healthy answered at {base_url}{HEALTH_PATH} within "
            f"{policy.timeout_s:g} s (server.external_timeout_s); check server.base_url and that "
            "the server is up"
        ) from err
    yield RunningServer(base_url, None, None, [], waited)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()) or "    (empty)"
