"""Is the server that answers still the one the cell verified? Checked around every eval.

The identity (``backends.server_identity``) is read before the first eval and compared before and
after each: a change fails the cell (``server_changed``) or, with ``server.on_mismatch=warn``,
is recorded as a mismatch, so the report marks the cell MISCONFIGURED and never judges it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from backends.server_identity import identity_changes, server_identity
from backends.server_info import ServerInfo
from pipeline.measuring.eval_window import MeasureError
from pipeline.results.result_draft import ResultDraft

MISCONFIGURED = "MISCONFIGURED"


@dataclass
class ServerWatch:
    """The identity the cell measures under, and the policy for a change."""

    identity: dict[str, object]
    on_mismatch: str  # fail | warn

    @classmethod
    def start(cls, info: ServerInfo, on_mismatch: str) -> ServerWatch:
        """Watch the server that ``info`` describes."""
        return cls(server_identity(info), on_mismatch)

    def check(self, info: ServerInfo, when: str, result: ResultDraft) -> None:
        """Compare a new read with the identity; fail or record per the policy.

        Args:
            info: ``/server_info`` as read now.
            when: where in the cell, e.g. "after eval gsm8k_sample".
            result: the cell's draft (mismatches and warnings go there under ``warn``).

        Raises:
            MeasureError: ``server_changed`` under ``server.on_mismatch=fail``.
        """
        now = server_identity(info)
        changed = identity_changes(self.identity, now)
        if not changed:
            return
        lines = "; ".join(f"{m.key}: was {m.requested!r}, now {m.observed!r}" for m in changed)
        if self.on_mismatch == "fail":
            raise MeasureError(
                "server_changed",
                f"the server changed {when}: {lines}. Its answers would mix two servers under "
                "one name; keep one server for the whole cell (server.on_mismatch=warn measures "
                f"it anyway, marked {MISCONFIGURED})",
            )
        keyed = [dataclasses.replace(m, key=f"{m.key} (changed {when})") for m in changed]
        result.add_mismatches(keyed)
        result.warnings.append(f"{MISCONFIGURED}: the server changed {when}: {lines}")
        self.identity = now  # each change is said once
