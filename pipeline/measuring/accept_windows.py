"""Accept statistics per eval and per cell, with the server's own figures beside them (pure).

Each eval runs in its own window: ``/flush_cache`` before it (zeroes ``avg_spec_accept_length``),
a ``/metrics`` snapshot before and after, ``/server_info`` after. Per window this module puts the
per-request figures (``pipeline.measuring.accept_stats.summarize_accept``) beside:
- the server's ``avg_spec_accept_length``, cross-checked with the per-request equivalent
  (accepted tokens per verify step without the prefill token) of the requests sent in the window;
- the Prometheus counter deltas, whose Δgeneration_tokens / Δverify_calls is cross-checked with
  the token-weighted accept length of the same requests;
- the uncertainty of the accept rate and of each per-position acceptance (ratio estimators
  clustered by request, as the accept length's).
The cell combines its windows: counters add up, and the server figures are averaged weighted by
each window's verify steps, which is what one ``/server_info`` read over the whole cell would give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evals.sample_line import SampleJson
from pipeline.measuring.accept_stats import (
    agreement,
    cross_check,
    ratio_stderr,
    spec_records,
    summarize_accept,
)
from pipeline.measuring.log_interval import DECODE_LOG_INTERVAL, server_tolerance
from pipeline.measuring.metric_deltas import (
    GENERATION,
    NOT_READ,
    REQUESTS,
    VERIFY,
    VERIFY_BY_RANK,
    MetricDeltas,
    metric_deltas,
    summed,
)
from pipeline.results.accept_block import AcceptBlock, CrossCheck, ServerWindow, Traffic

__all__ = [  # the counters' names and reader live in metric_deltas; callers find them here too
    "GENERATION", "NOT_READ", "REQUESTS", "VERIFY", "VERIFY_BY_RANK", "MetricDeltas", "Window",
    "accept_warnings", "combine", "fewest_iterations", "metric_deltas", "window_accept",
]  # fmt: skip


@dataclass(frozen=True)
class Window:
    """What one eval's window observed."""

    new: list[SampleJson]  # records of requests sent in the window (not resumed ones)
    server_value: float | None  # avg_spec_accept_length read at its end
    deltas: MetricDeltas  # metric_deltas of the window
    # How server_value weighted the DP ranks (accept_stats.server_accept); None: one rank
    server_weighting: str | None = None


def traffic(new: Sequence[Mapping[str, Any]], deltas: MetricDeltas) -> Traffic | None:
    """Requests the server counted in the window against those the pipeline sent.

    Every answered request was counted once; a retried one at most once per attempt. More than
    that is another client's traffic (``foreign`` > 0), which the server-level figures include.
    """
    counted = deltas.requests
    if counted is None:
        return None
    sent = sum(1 for r in new if r.get("error_kind") is None)
    attempts = sum(max(int(r.get("attempts") or 1), 1) for r in new if r.get("attempts") != 0)
    foreign = max(0.0, counted - max(attempts, sent))
    return Traffic(counted, sent, attempts, foreign)


def uncertainty(
    records: Sequence[Mapping[str, Any]],
) -> tuple[float | None, tuple[float | None, ...]]:
    """Clustered standard errors of the accept rate and of each per-position acceptance."""
    specs = spec_records(records)
    if not specs:
        return None, ()
    correct = np.array([s["num_correct_drafts"] for s in specs], dtype=float)
    proposed = np.array([s["num_proposed_drafts"] for s in specs], dtype=float)
    width = max((len(s["histogram"]) for s in specs), default=0)
    hist = np.zeros((len(specs), width))
    for row, s in enumerate(specs):
        hist[row, : len(s["histogram"])] = s["histogram"]
    steps = hist.sum(axis=1)
    at_least = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]  # steps with >= i correct drafts
    positions = tuple(ratio_stderr(at_least[:, i], steps) for i in range(1, width))
    rate = ratio_stderr(correct, proposed) if proposed.sum() else None
    return rate, positions if steps.sum() else ()


def counters_check(
    per_request: AcceptBlock, deltas: MetricDeltas, rel_tolerance: float
) -> CrossCheck:
    """Δgeneration_tokens / Δverify_calls against the token-weighted per-request accept length."""
    return agreement("metrics", deltas.accept_length, per_request.accept_length, rel_tolerance)


def window_accept(
    records: Sequence[SampleJson],
    window: Window,
    speculative: bool,
    rel_tolerance: float,
    left_out: float = 0.0,
) -> AcceptBlock:
    """Accept statistics of one eval: all its records, and its window's server figures.

    ``left_out``: the largest share of the window's verify steps SGLang's average can leave out
    (``log_interval.left_out_share``), which widens the server cross-check's tolerance.
    """
    out = summarize_accept(records, speculative)
    if out.status == "ok":
        rate, positions = uncertainty(records)
        out = replace(out, accept_rate_stderr=rate, per_position_acceptance_stderr=positions)
    sent = summarize_accept(window.new, speculative)
    server_tol = server_tolerance(left_out, len(sent.per_position_acceptance),
                                  sent.server_equivalent_accept_length, rel_tolerance)  # fmt: skip
    return replace(
        out,
        server_avg_spec_accept_length=window.server_value,
        metrics=window.deltas.to_json(),
        cross_check=cross_check(sent, window.server_value, server_tol),
        metrics_cross_check=counters_check(sent, window.deltas, rel_tolerance),
        traffic=traffic(window.new, window.deltas),
        server_window=server_window(records, window.new),
        server_accept_weighting=window.server_weighting,
    )


def server_window(
    records: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> ServerWindow:
    """Which of an eval's requests the server-side figures cover.

    After a resume only those sent in this run (``resumed``): the kept ones were counted by a
    server long gone. The per-request figures cover every request.
    """
    covers = "resumed" if len(new) < len(records) else "all"
    return ServerWindow(covers, len(new), len(records))


def combine(windows: Sequence[Window]) -> Window:
    """One window for the whole cell: counters summed, server figures verify-weighted."""
    new = [r for w in windows for r in w.new]
    deltas = summed([w.deltas for w in windows])
    weighted = [(w.server_value, _verify_weight(w)) for w in windows if w.server_value is not None]
    total = sum(weight for _, weight in weighted)
    server = sum(v * weight for v, weight in weighted) / total if total else None
    if len(weighted) == 1:
        server = weighted[0][0]  # exactly what the server said, no rounding through weights
    ways = [w.server_weighting for w in windows if w.server_weighting]
    unweighted = [way for way in ways if way.startswith("unweighted")]
    chosen = (unweighted or ways)[0] if ways else None
    return Window(new, server, deltas, chosen)


def _verify_weight(window: Window) -> float:
    counted = window.deltas.verify
    if counted:
        return float(counted)
    return float(sum(s["verify_ct"] for s in spec_records(window.new)))


def accept_warnings(scope: str, accept: AcceptBlock, iterations: int | None = None) -> list[str]:
    """Warnings for the cross-checks of ``accept`` that disagree beyond their tolerance.

    ``iterations``: the fewest decode iterations the window's requests took (``fewest_iterations``;
    None: not known), which says whether SGLang logged its accept totals in the window.
    """
    out = []
    if accept.status == "missing":
        out.append(
            f"{scope}: the cell asks for speculative decoding but no request carried accept "
            "statistics (return_meta_info / return_spec_tokens_details)"
        )
    out += _disagreement(
        scope,
        accept.cross_check,
        "server-level avg_spec_accept_length",
        "the per-request totals",
        "more than the log-interval effect",
    )
    out += _no_server_figure(scope, accept, iterations)
    out += _without_statistics(scope, accept)
    weighting = accept.server_accept_weighting
    if weighting is not None and weighting.startswith("unweighted") and scope != "cell":
        out.append(f"{scope}: the server-level accept length is the {weighting}")
    seen = accept.traffic
    if seen is not None and seen.foreign and scope != "cell":  # each eval's window says it
        out.append(
            f"{scope}: the server counted {seen.counted:g} requests but the pipeline sent "
            f"{seen.sent} ({seen.attempts} attempts): another client used the server, and "
            "its requests are in the server-level figures (server.on_foreign_traffic=fail "
            "fails the cell)"
        )
    out += _disagreement(
        scope,
        accept.metrics_cross_check,
        "Prometheus generation_tokens / spec_verify_calls",
        "the per-request accept length",
        "requests the client did not receive, or counters of another client",
    )
    return out


# SGLang folds its lifetime accept totals in once per decode log interval (log_interval.py): a
# window with fewer decode iterations may have no server figure at all.


def fewest_iterations(steps: Sequence[int], concurrency: int) -> int:
    """The fewest decode iterations that ``steps`` (each request's verify steps) can have taken.

    A request's steps are one per iteration, and at most ``concurrency`` requests were in flight:
    at least its longest request's steps, and the total shared ``concurrency`` ways.
    """
    total = sum(steps)
    return max(max(steps, default=0), -(-total // max(1, concurrency)))


def _no_server_figure(scope: str, accept: AcceptBlock, iterations: int | None) -> list[str]:
    """Why an eval whose requests were verified has no server-level accept length."""
    check = accept.cross_check
    if scope == "cell" or check is None or check.observed is not None:
        return []
    if check.per_request is None:
        return []
    if iterations is not None and iterations >= DECODE_LOG_INTERVAL:
        why = (
            f"its requests took at least {iterations} decode iterations, more than one decode "
            f"log interval ({DECODE_LOG_INTERVAL}), so its counters were reset after this eval's "
            "/flush_cache: another client flushed them (another cell measuring the same server?)"
        )
    else:
        steps = accept.metrics.get(VERIFY)
        ran = f" ({steps:g} verify steps, batched)" if isinstance(steps, int | float) else ""
        why = (
            f"either the eval ran fewer decode iterations{ran} than one decode log interval "
            f"({DECODE_LOG_INTERVAL}: SGLang adds to the average only when it logs) or another "
            "client reset the counters (/flush_cache) after this eval's own flush"
        )
    return [
        f"{scope}: the server reported no avg_spec_accept_length at the end of the eval "
        f"although its requests were verified ({why}); the per-request figures stand, the "
        "server-level one is missing"
    ]


def _without_statistics(scope: str, accept: AcceptBlock) -> list[str]:
    """A warning when answered requests came back without accept statistics."""
    lacking = accept.without_statistics
    if not lacking or scope == "cell":  # each eval's window says it
        return []
    return [
        f"{scope}: {lacking} of {accept.n_requests} answered requests carried no accept "
        "statistics (no meta_info / sglext in a 200 reply: a proxy that strips SGLang's fields?); "
        f"the accept figures are over the other {accept.n_with_spec}, and mtp-eval-report fails "
        "the accept check beyond the tolerance's accept_max_unmeasured share"
    ]


def _disagreement(
    scope: str, check: CrossCheck | None, observed: str, per_request: str, why: str
) -> list[str]:
    """One warning when ``check`` disagrees beyond its tolerance, else none."""
    if check is None or check.agrees is not False:
        return []
    return [
        f"{scope}: {observed} {check.observed:.3f} differs from {per_request} "
        f"{check.per_request:.3f} by {100 * (check.relative_difference or 0.0):.1f}% ({why})"
    ]
