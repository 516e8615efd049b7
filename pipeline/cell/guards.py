"""Checks that stop a cell early with a message that says what to change."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from pipeline.results.failures import CellError


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


def check_error_rates(rates: Mapping[str, float | None], max_error_rate: float) -> None:
    """Fail the cell when an eval lost too many requests to errors (its samples are kept).

    Args:
        rates: each eval's error rate (None: none measured).
        max_error_rate: the most an eval may lose.
    """
    bad = {name: rate or 0.0 for name, rate in rates.items()}
    over = {name: rate for name, rate in bad.items() if rate > max_error_rate}
    if over:
        listed = ", ".join(f"{name} {100 * rate:.1f}%" for name, rate in over.items())
        raise GuardError(
            "too_many_errors",
            f"requests failed beyond client.max_error_rate={max_error_rate}: {listed}; see "
            "error_kind in samples/*.jsonl and server.log (a rerun asks only the failed ones)",
        )
