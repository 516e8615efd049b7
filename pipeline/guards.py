"""Checks that stop a cell early with a message that says what to change."""

from __future__ import annotations

import dataclasses
import errno
import os
import socket
from collections.abc import Mapping
from typing import Any

from pipeline.schema import RootConf


class GuardError(RuntimeError):
    """A precondition or an outcome that fails the cell; ``kind`` goes into result.json."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def with_api_key(conf: RootConf) -> RootConf:
    """The config with ``client.api_key`` read from the variable ``client.api_key_env`` names.

    Raises:
        ValueError: the key was written into the config itself (Hydra would save it in
            .hydra/config.yaml), or the variable is unset.
    """
    client = conf.client
    if client.api_key and not client.api_key_env:
        raise ValueError(
            "client.api_key is set in the config, which Hydra saves in .hydra/config.yaml: put "
            "the key in an environment variable and set client.api_key_env=THAT_VARIABLE"
        )
    if not client.api_key_env:
        return conf
    key = os.environ.get(client.api_key_env)
    if not key:
        raise ValueError(f"client.api_key_env={client.api_key_env} but that variable is unset")
    return dataclasses.replace(conf, client=dataclasses.replace(client, api_key=key))


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


def check_error_rates(evals: Mapping[str, Mapping[str, Any]], max_error_rate: float) -> None:
    """Fail the cell when an eval lost too many requests to errors (its samples are kept)."""
    bad = {name: ev.get("error_rate") or 0.0 for name, ev in evals.items()}
    over = {name: rate for name, rate in bad.items() if rate > max_error_rate}
    if over:
        listed = ", ".join(f"{name} {100 * rate:.1f}%" for name, rate in over.items())
        raise GuardError(
            "too_many_errors",
            f"requests failed beyond client.max_error_rate={max_error_rate}: {listed}; see "
            "error_kind in samples/*.jsonl and server.log (a rerun asks only the failed ones)",
        )
