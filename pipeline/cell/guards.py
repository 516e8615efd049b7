"""Checks that stop a cell early with a message that says what to change."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

import psutil

from pipeline.results.cell_error import CellError
from pipeline.results.eval_block import EvalSummary
from pipeline.results.json_values import as_map


class GuardError(CellError):
    """A precondition or an outcome that fails the cell; ``kind`` goes into result.json."""


def check_port_free(host: str, port: int) -> None:
    """Fail before launching when another listener holds ``server.port`` on ``host``.

    The port is tried as SGLang binds it (uvicorn sets ``SO_REUSEADDR``): the previous cell's
    server, stopped a moment ago, leaves connections in TIME_WAIT that would refuse a plain
    bind but not the server's, so a sweep on one pinned port runs every cell.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                raise
            raise GuardError(
                "port_in_use",
                f"server.port={port} on {host} is held by another listener{_holder(port)}; "
                "stop it, choose another port, or leave server.port unset for a free one",
            ) from err


def _holder(port: int) -> str:
    """`` (pid N, NAME)`` of the process listening on ``port`` when this user may see it."""
    try:
        pids = {
            c.pid
            for c in psutil.net_connections(kind="tcp")
            if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN and c.pid
        }
        return "".join(f" (pid {pid}, {psutil.Process(pid).name()})" for pid in sorted(pids)[:1])
    except (psutil.Error, OSError):  # another user's process, or no /proc to read
        return ""


def check_error_rates(evals: Mapping[str, EvalSummary], max_error_rate: float) -> None:
    """Fail the cell when an eval lost too many requests to errors, or had no answer at all.

    The message names the error kinds and what the server said for each, so an all-503 cell
    says so instead of blaming a statistic the answers would have carried. Samples are kept.

    Args:
        evals: each eval's block.
        max_error_rate: the most an eval may lose.
    """
    over = {
        name: ev
        for name, ev in evals.items()
        if (ev.rates.get("error_rate") or 0.0) > max_error_rate
        or (ev.n_samples and ev.data.get("n_answered") == 0)
    }
    if not over:
        return
    listed = "; ".join(_lost(name, ev) for name, ev in over.items())
    raise GuardError(
        "too_many_errors",
        f"requests failed beyond client.max_error_rate={max_error_rate}: {listed}; see "
        "error_kind in samples/*.jsonl and server.log (a rerun asks only the failed ones)",
    )


def _lost(name: str, ev: EvalSummary) -> str:
    text = f"{name} {100 * (ev.rates.get('error_rate') or 0.0):.1f}%"
    if ev.data.get("n_answered") == 0:
        text += " (no answers)"
    if ev.error_kinds:
        text += ", " + ", ".join(f"{kind} {n}" for kind, n in ev.error_kinds.items())
    said = as_map(ev.data.get("error_examples"))
    examples = "; ".join(f"{kind}: {words}" for kind, words in said.items() if words)
    return text + (f" (the server said: {examples})" if examples else "")
