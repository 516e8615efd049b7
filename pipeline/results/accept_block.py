"""``accept`` of ``result.json`` (of the cell and of each eval): speculative accept statistics.

``pipeline.measuring.accept_stats`` / ``accept_windows`` build the block as an ``AcceptBlock``
from its typed parts (no dict between them); the cell writes ``to_json`` (the key order the cell
always wrote) and every reader uses the fields. A block read from a file writes back exactly what
it was read from; an old result without a field reads it as None or empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pipeline.results.eval_schema import AcceptJson, CrossCheckJson, ServerWindowJson, TrafficJson
from pipeline.results.json_values import EMPTY, as_list, as_map

Source = Literal["server", "metrics"]  # which server figure a cross-check compares


@dataclass(frozen=True)
class CrossCheck:
    """``cross_check`` / ``metrics_cross_check``: a server figure against the per-request one."""

    observed: float | None  # ``server`` (avg_spec_accept_length) or ``metrics`` (Prometheus)
    per_request: float | None
    relative_difference: float | None = None
    agrees: bool | None = None  # None: one of the two figures is missing
    source: Source = "server"  # the observed figure's key: server (/server_info) | metrics

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: Source) -> CrossCheck:
        """The check as written; ``source`` names the observed figure (server | metrics)."""
        check = cast(CrossCheckJson, data)
        return cls(
            check.get(source), check.get("per_request"), check.get("relative_difference"),
            check.get("agrees"), source,
        )  # fmt: skip

    def to_json(self) -> CrossCheckJson:
        """The check as the cell writes it (no ``relative_difference`` when a figure is missing)."""
        out = cast(CrossCheckJson, {self.source: self.observed, "per_request": self.per_request})
        if self.relative_difference is not None:
            out["relative_difference"] = self.relative_difference
        out["agrees"] = self.agrees
        return out


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

    def to_json(self) -> TrafficJson:
        """The traffic block as the cell writes it."""
        return {"counted": self.counted, "sent": self.sent, "attempts": self.attempts,
                "foreign": self.foreign}  # fmt: skip


@dataclass(frozen=True)
class ServerWindow:
    """``server_window``: which of an eval's requests the server-side figures cover."""

    covers: str  # all | resumed (only those sent after a resume: the rest were kept)
    requests: int  # requests sent in the window
    of: int  # the eval's requests (kept and sent)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerWindow | None:
        """The block as written; None where an old result has none."""
        if not data:
            return None
        seen = cast(ServerWindowJson, data)
        return cls(str(seen.get("covers")), seen.get("requests", 0), seen.get("of", 0))

    def to_json(self) -> ServerWindowJson:
        """The block as the cell writes it."""
        return {"covers": self.covers, "requests": self.requests, "of": self.of}


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
    completion_tokens: int | None = None  # the sums the figures are ratios of
    verify_ct: int | None = None
    num_correct_drafts: int | None = None
    num_proposed_drafts: int | None = None
    accept_rate_stderr: float | None = None
    per_position_acceptance_stderr: tuple[float | None, ...] = ()
    server_avg_spec_accept_length: float | None = None  # /server_info at the window's end
    metrics: Mapping[str, Any] = field(default_factory=dict)  # Prometheus counter deltas
    cross_check: CrossCheck | None = None
    metrics_cross_check: CrossCheck | None = None
    traffic: Traffic | None = None
    server_window: ServerWindow | None = None  # set on a block built over a counter window
    server_accept_weighting: str | None = None  # how the server figure weighted its DP ranks
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
            completion_tokens=block.get("completion_tokens"),
            verify_ct=block.get("verify_ct"),
            num_correct_drafts=block.get("num_correct_drafts"),
            num_proposed_drafts=block.get("num_proposed_drafts"),
            accept_rate_stderr=block.get("accept_rate_stderr"),
            per_position_acceptance_stderr=tuple(
                as_list(block.get("per_position_acceptance_stderr"))
            ),
            server_avg_spec_accept_length=block.get("server_avg_spec_accept_length"),
            metrics=as_map(block.get("metrics")),
            cross_check=_check(checks[0], "server"),
            metrics_cross_check=_check(checks[1], "metrics"),
            traffic=Traffic.from_json(seen) if isinstance(seen, Mapping) else None,
            server_window=ServerWindow.from_json(as_map(block.get("server_window"))),
            server_accept_weighting=block.get("server_accept_weighting"),
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
        return self.server_window.to_json() if self.server_window else EMPTY

    def to_json(self) -> AcceptJson:
        """The block as written (``from_json(x).to_json() == x``, key order included).

        A block built by the cell (no ``data``) writes its fields in the order the cell always
        wrote them: the counts and status, the per-request figures (``ok``), the uncertainty
        and the window's server-side figures (a block built over a window).
        """
        if self.data:
            return cast(AcceptJson, dict(self.data))
        out: AcceptJson = {"n_requests": self.n_requests or 0, "n_with_spec": self.n_with_spec or 0}
        out["status"] = str(self.status)
        if self.status == "ok":
            out.update(_per_request_json(self))
        if self.server_window is not None:
            out.update(_window_json(self, self.server_window))
        return out


def _per_request_json(b: AcceptBlock) -> AcceptJson:
    return cast(AcceptJson, {
        "accept_length": b.accept_length, "accept_length_stderr": b.accept_length_stderr,
        "accept_length_request_mean": b.accept_length_request_mean,
        "accept_rate": b.accept_rate, "per_position_acceptance": list(b.per_position_acceptance),
        "server_equivalent_accept_length": b.server_equivalent_accept_length,
        "completion_tokens": b.completion_tokens, "verify_ct": b.verify_ct,
        "num_correct_drafts": b.num_correct_drafts, "num_proposed_drafts": b.num_proposed_drafts,
    })  # fmt: skip


def _window_json(b: AcceptBlock, window: ServerWindow) -> AcceptJson:
    out = cast(AcceptJson, {})
    if b.status == "ok":
        out["accept_rate_stderr"] = b.accept_rate_stderr
        out["per_position_acceptance_stderr"] = list(b.per_position_acceptance_stderr)
    out["server_avg_spec_accept_length"] = b.server_avg_spec_accept_length
    out["metrics"] = dict(b.metrics)
    if b.cross_check is not None:
        out["cross_check"] = b.cross_check.to_json()
    if b.metrics_cross_check is not None:
        out["metrics_cross_check"] = b.metrics_cross_check.to_json()
    out["traffic"] = b.traffic.to_json() if b.traffic else None  # type: ignore[typeddict-item]
    out["server_window"] = window.to_json()
    if b.server_accept_weighting is not None:
        out["server_accept_weighting"] = b.server_accept_weighting
    return out


def _check(data: Mapping[str, Any], source: Source) -> CrossCheck | None:
    return CrossCheck.from_json(data, source) if data else None
