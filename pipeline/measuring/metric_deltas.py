"""Prometheus counter deltas over an eval's window, typed (pure): the accept block's ``metrics``.

``/metrics`` is read before and after each eval; the deltas of the generated tokens, the verify
steps and the requests give the window's accept length (Δgeneration_tokens / Δverify_calls),
and with several DP ranks the verify steps of each. None: the counter could not be read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backends.server_info import LATEST, metric_total, verify_calls_by_rank

# Every release this project knows names them alike (backends.server_info.SURFACE_BY_VERSION).
GENERATION = LATEST.metrics.generation_tokens
VERIFY = LATEST.metrics.verify_calls
REQUESTS = LATEST.metrics.requests
VERIFY_BY_RANK = "spec_verify_calls_by_dp_rank"  # {dp_rank: delta}, with several DP ranks

MetricsJson = dict[str, float | dict[str, float] | None]  # the accept block's ``metrics``


@dataclass(frozen=True)
class MetricDeltas:
    """The counters' deltas over a window (None: unknown); empty: the window read none."""

    generation: float | None = None
    verify: float | None = None
    requests: float | None = None
    verify_by_rank: dict[str, float] | None = None  # only with several DP ranks
    read: bool = True  # False: no counters were read at all (``metrics`` is written empty)

    @property
    def accept_length(self) -> float | None:
        """Δgeneration_tokens / Δverify_calls (None when either is unknown or no step ran)."""
        gen, verify = self.generation, self.verify
        return gen / verify if gen is not None and verify else None

    def to_json(self) -> MetricsJson:
        """The ``metrics`` block, keyed by the Prometheus names as the cell always wrote it."""
        if not self.read:
            return {}
        out: MetricsJson = {
            GENERATION: self.generation,
            VERIFY: self.verify,
            REQUESTS: self.requests,
        }
        out["accept_length"] = self.accept_length
        if self.verify_by_rank is not None:
            out[VERIFY_BY_RANK] = self.verify_by_rank
        return out


NOT_READ = MetricDeltas(read=False)


def metric_deltas(before: str | None, after: str | None) -> MetricDeltas:
    """Counter deltas between two ``/metrics`` texts (None where either text lacks one)."""
    found: list[float | None] = []
    for name in (GENERATION, VERIFY, REQUESTS):
        a, b = _snapshot_total(before, name), _snapshot_total(after, name)
        found.append(None if a is None or b is None else b - a)
    a_ranks, b_ranks = verify_calls_by_rank(before), verify_calls_by_rank(after)
    by_rank = None
    if b_ranks and len(b_ranks) > 1:
        by_rank = {r: v - a_ranks.get(r, 0.0) for r, v in b_ranks.items()}
    return MetricDeltas(found[0], found[1], found[2], by_rank)


def _snapshot_total(text: str | None, name: str) -> float | None:
    """A counter's total; 0 where the server has served nothing yet (no sample exists then)."""
    value = metric_total(text, name)
    if value is None and text is not None and metric_total(text, REQUESTS) is None:
        return 0.0  # prometheus_client writes a labelled counter's first sample on first use
    return value


def summed(deltas: Sequence[MetricDeltas]) -> MetricDeltas:
    """The cell's counters: each window's summed (unknown if any window's is unknown)."""

    def total(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return None if not values or len(known) < len(values) else sum(known)

    return MetricDeltas(
        total([d.generation for d in deltas]),
        total([d.verify for d in deltas]),
        total([d.requests for d in deltas]),
    )
