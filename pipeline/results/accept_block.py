"""``accept`` of ``result.json`` (of the cell and of each eval): speculative accept statistics.

``pipeline.measuring.accept_windows`` assembles the block and hands it over as ``AcceptBlock``;
the cell writes ``to_json`` (the block as assembled, key order included) and every reader uses the
fields. An old result without a field reads it as None or empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pipeline.results.eval_schema import AcceptJson, CrossCheckJson, TrafficJson
from pipeline.results.json_values import as_list, as_map


@dataclass(frozen=True)
class CrossCheck:
    """``cross_check`` / ``metrics_cross_check``: a server figure against the per-request one."""

    observed: float | None  # ``server`` (avg_spec_accept_length) or ``metrics`` (Prometheus)
    per_request: float | None
    relative_difference: float | None = None
    agrees: bool | None = None  # None: one of the two figures is missing

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: Literal["server", "metrics"]) -> CrossCheck:
        """The check as written; ``source`` names the observed figure (server | metrics)."""
        check = cast(CrossCheckJson, data)
        return cls(
            check.get(source), check.get("per_request"), check.get("relative_difference"),
            check.get("agrees"),
        )  # fmt: skip


@dataclass(frozen=True)
class Traffic:
    """``traffic``: requests the server counted in the window against those the pipeline sent."""

    counted: float
    sent: int
    attempts: int
    foreign: float  # > 0: another client's requests are in the server-level figures

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Traffic:
        """The traffic block as written."""
        seen = cast(TrafficJson, data)
        return cls(seen["counted"], seen["sent"], seen["attempts"], seen["foreign"])


@dataclass(frozen=True)
class AcceptBlock:
    """``accept`` (of the cell or of one eval): speculative accept statistics."""

    status: str | None = None  # ok | missing | not_speculative
    accept_length: float | None = None  # token-weighted: sum(completion) / sum(verify_ct)
    accept_rate: float | None = None
    n_with_spec: int | None = None
    accept_length_stderr: float | None = None
    n_requests: int | None = None
    accept_length_request_mean: float | None = None
    per_position_acceptance: tuple[float, ...] = ()
    server_equivalent_accept_length: float | None = None  # the prefill token left out
    accept_rate_stderr: float | None = None
    per_position_acceptance_stderr: tuple[float | None, ...] = ()
    server_avg_spec_accept_length: float | None = None  # /server_info at the window's end
    metrics: Mapping[str, Any] = field(default_factory=dict)  # Prometheus counter deltas
    cross_check: CrossCheck | None = None
    metrics_cross_check: CrossCheck | None = None
    traffic: Traffic | None = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AcceptBlock:
        """The accept block as written (an old result without one reads as all None)."""
        block = cast(AcceptJson, data)
        status = block.get("status")
        checks = (as_map(block.get("cross_check")), as_map(block.get("metrics_cross_check")))
        seen = block.get("traffic")
        return cls(
            status=None if status is None else str(status),
            accept_length=block.get("accept_length"),
            accept_rate=block.get("accept_rate"),
            n_with_spec=block.get("n_with_spec"),
            accept_length_stderr=block.get("accept_length_stderr"),
            n_requests=block.get("n_requests"),
            accept_length_request_mean=block.get("accept_length_request_mean"),
            per_position_acceptance=tuple(as_list(block.get("per_position_acceptance"))),
            server_equivalent_accept_length=block.get("server_equivalent_accept_length"),
            accept_rate_stderr=block.get("accept_rate_stderr"),
            per_position_acceptance_stderr=tuple(
                as_list(block.get("per_position_acceptance_stderr"))
            ),
            server_avg_spec_accept_length=block.get("server_avg_spec_accept_length"),
            metrics=as_map(block.get("metrics")),
            cross_check=_check(checks[0], "server"),
            metrics_cross_check=_check(checks[1], "metrics"),
            traffic=Traffic.from_json(seen) if isinstance(seen, Mapping) else None,
            data=data,
        )

    @property
    def without_statistics(self) -> int:
        """Answered requests whose reply carried no accept statistics (no meta_info, no sglext).

        They drop out of every per-request figure; 0 where the block does not say.
        """
        if self.status != "ok" or self.n_requests is None or self.n_with_spec is None:
            return 0
        return max(0, self.n_requests - self.n_with_spec)

    @property
    def window(self) -> Mapping[str, Any]:
        """``server_window``: which requests the server-side figures cover (empty: all, or old)."""
        return as_map(self.data.get("server_window"))

    def to_json(self) -> AcceptJson:
        """The block as written (``from_json(x).to_json() == x``, key order included)."""
        return cast(AcceptJson, dict(self.data))


def _check(data: Mapping[str, Any], source: Literal["server", "metrics"]) -> CrossCheck | None:
    return CrossCheck.from_json(data, source) if data else None
