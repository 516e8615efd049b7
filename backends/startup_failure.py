"""Why an SGLang server did not come up, from its start-up log.

Evidence in the log wins over the bare facts of the exit: an out-of-memory error is ``oom`` even
when it surfaced as a scheduler crash, and a log that shows a crash is ``crash`` even when the
caller gave up waiting. ``message`` is the most specific line: the exception, not the traceback.
SGLang's child processes print ``Scheduler hit an exception`` (or the detokenizer's or tokenizer
manager's) and send SIGQUIT, and the launcher logs ``Received sigquit from a child process``; a
failed warmup logs ``Initialization failed. warmup error``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_MESSAGE = 500
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|Not enough memory", re.IGNORECASE)
_CRASH = re.compile(
    r"(?:Scheduler|DetokenizerManager|TokenizerManager) hit an exception"
    r"|Received sigquit|Initialization failed\. warmup error"
)
# Lines that show the launcher got past argument handling and started the scheduler processes.
_SCHEDULER_STARTED = re.compile(
    r"\bTP\d+\]|sglang::scheduler|Init torch distributed begin|Load weight begin"
)
_ARGPARSE = re.compile(r"^\S[^:]*: error: .+")  # "sglang serve: error: unrecognized arguments: ..."
# "RuntimeError: ...", and a bare "Exception: ..." (SGLang's failed graph capture raises one).
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*)?(?:Error|Exception)(?::\s.*)?$")
_CONFIG_EXCEPTION = re.compile(r"^(?:ValueError|AssertionError)(?::\s.*)?$")


@dataclass(frozen=True)
class StartupFailure:
    """A classified start-up failure."""

    kind: str  # rejected_config | oom | crash | timeout | unknown
    message: str


def _short(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def _exception_message(lines: list[str], index: int) -> str:
    # A bare "AssertionError" says nothing: the traceback's source line above it names the check.
    line = lines[index].strip()
    if line == "AssertionError" and index > 0 and lines[index - 1].strip().startswith("assert"):
        return _short(f"AssertionError ({lines[index - 1].strip()})")
    return _short(line)


def _last_match(lines: list[str], pattern: re.Pattern[str], start: int = 0) -> int | None:
    hits = [i for i in range(start, len(lines)) if pattern.search(lines[i].strip())]
    return hits[-1] if hits else None


def _first_match(lines: list[str], pattern: re.Pattern[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if pattern.search(line)), None)


def _oom(lines: list[str]) -> StartupFailure | None:
    hit = _last_match(lines, _OOM)
    if hit is None:
        return None
    # Prefer the exception line that carries the OOM text (it has the sizes).
    exc = [i for i in range(len(lines)) if _OOM.search(lines[i]) and _EXCEPTION.match(lines[i])]
    return StartupFailure("oom", _short(lines[exc[-1] if exc else hit]))


def _crash(lines: list[str]) -> StartupFailure | None:
    marker = _first_match(lines, _CRASH)
    if marker is None:
        return None
    exc = _last_match(lines, _EXCEPTION, start=marker)
    if exc is None:  # a log tail that begins inside the traceback: only the SIGQUIT line after it
        exc = _last_match(lines[:marker], _EXCEPTION)
    if exc is not None:
        return StartupFailure("crash", _exception_message(lines, exc))
    return StartupFailure("crash", _short(lines[marker]))


def _rejected(lines: list[str]) -> StartupFailure | None:
    parse_error = _last_match(lines, _ARGPARSE)
    if parse_error is not None:
        return StartupFailure("rejected_config", _short(lines[parse_error]))
    started = _first_match(lines, _SCHEDULER_STARTED)
    exc = _first_match(lines[:started] if started is not None else lines, _CONFIG_EXCEPTION)
    if exc is None:
        return None
    return StartupFailure("rejected_config", _exception_message(lines, exc))


def classify_startup_log(log_text: str, exit_code: int | None, timed_out: bool) -> StartupFailure:
    """Classify why a server did not become ready.

    Args:
        log_text: The server's combined stdout/stderr up to the failure.
        exit_code: The launcher's exit status, None if it was still running.
        timed_out: Whether the caller stopped waiting for readiness.

    Returns:
        ``oom``, ``crash`` or ``rejected_config`` when the log shows it, else ``timeout`` when
        timed out, else ``unknown``; the message is the most specific line found.
    """
    lines = log_text.splitlines()
    for check in (_oom, _crash, _rejected):
        found = check(lines)
        if found is not None:
            return found
    last = next((line.strip() for line in reversed(lines) if line.strip()), "(empty log)")
    if timed_out:
        return StartupFailure("timeout", _short(f"not ready before the timeout; last line: {last}"))
    return StartupFailure("unknown", _short(f"exit code {exit_code}; last line: {last}"))
