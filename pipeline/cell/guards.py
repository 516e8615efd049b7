"""Checks that stop a cell early with a message that says what to change."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from pipeline.results.cell_error import CellError
from pipeline.results.eval_block import EvalSummary
from pipeline.results.json_values import as_map


class GuardError(CellError):
    """A precondition or an outcome that fails the cell; ``kind`` goes into result.json."""


def check_port_free(host: str, port: int) -> None:
    """Fail before launching when ``server.port`` is already taken by another process."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                raise
            raise GuardError(
                "port_in_use",
                f"server.port={port} on {host} is taken by another process; free it, choose "
                "another, or leave server.port unset for a free one",
            ) from err


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
