"""Which server answers: an identity read from ``/server_info``, compared across a cell (pure).

A cell reads it before its first eval and again around every eval: a server swapped behind the
address (another backend on the same port) or restarted between evals would otherwise be
measured under the first one's name.
"""

from __future__ import annotations

from collections.abc import Mapping

from backends.server_info import ServerInfo
from backends.verify import Mismatch, observed_settings

START_KEY_PREFIX = "start:"


def server_identity(server_info: ServerInfo) -> dict[str, object]:
    """What identifies the running server: its observed settings and its start marks.

    Two reads of one server give equal identities; a server swapped behind the address, or
    restarted (its start-up durations are measured anew), gives another.
    """
    marks = {START_KEY_PREFIX + k: v for k, v in server_info.start.items()}
    return {**observed_settings(server_info), **marks}


def identity_changes(before: Mapping[str, object], after: Mapping[str, object]) -> list[Mismatch]:
    """Each key whose value differs between two identities (``requested``: the earlier value)."""
    keys = [*before, *(k for k in after if k not in before)]
    return [
        Mismatch(key, before.get(key), after.get(key))
        for key in keys
        if before.get(key) != after.get(key)
    ]
