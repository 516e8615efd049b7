"""Speculative-decoding statistics of a cell from its per-request records (pure).

Definitions follow SGLang (``tokenizer_manager.py::_calculate_spec_decoding_metrics``):
- per request, accept length = completion_tokens / verify_ct (the prefill token included);
- token-weighted accept length = sum(completion_tokens) / sum(verify_ct), the figure a user's
  throughput follows, and its uncertainty as a ratio estimator clustered by request;
- accept rate = sum(correct drafts) / sum(proposed drafts), no bonus token;
- acceptance at draft position i = share of verify steps with at least i correct drafts;
- the server's ``avg_spec_accept_length`` counts accepted tokens per verify step without the prefill
  token, so the per-request equivalent is sum(completion_tokens - 1) / sum(verify_ct).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from backends.server_info import ServerInfo
from pipeline.results.accept_block import AcceptBlock, CrossCheck, Source


def spec_records(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``spec`` dicts of the records that carry speculative statistics."""
    return [r["spec"] for r in records if r.get("spec") and r["spec"].get("verify_ct")]


def summarize_accept(records: Sequence[Mapping[str, Any]], speculative: bool) -> AcceptBlock:
    """Accept statistics over sample records (one per request).

    Args:
        records: sample lines; each may carry ``spec`` with verify_ct, num_correct_drafts,
            num_proposed_drafts, completion_tokens and histogram.
        speculative: whether the cell asked for speculative decoding.

    Returns:
        The block's per-request part: the figures above, the number of requests with and
        without statistics, and ``status``: ok, missing (speculative but no request had
        statistics) or not_speculative.
    """
    specs = spec_records(records)
    answered = sum(1 for r in records if r.get("error_kind") is None)
    if not speculative or not specs:
        status = "missing" if speculative else "not_speculative"
        return AcceptBlock(status=status, n_requests=answered, n_with_spec=len(specs))
    completion = np.array([s["completion_tokens"] for s in specs], dtype=float)
    verify = np.array([s["verify_ct"] for s in specs], dtype=float)
    correct = sum(int(s["num_correct_drafts"]) for s in specs)
    proposed = sum(int(s["num_proposed_drafts"]) for s in specs)
    return AcceptBlock(
        status="ok", n_requests=answered, n_with_spec=len(specs),
        accept_length=float(completion.sum() / verify.sum()),
        accept_length_stderr=ratio_stderr(completion, verify),
        accept_length_request_mean=float(np.mean(completion / verify)),
        accept_rate=correct / proposed if proposed else None,
        per_position_acceptance=tuple(per_position_acceptance(s["histogram"] for s in specs)),
        server_equivalent_accept_length=float((completion - 1).sum() / verify.sum()),
        completion_tokens=int(completion.sum()), verify_ct=int(verify.sum()),
        num_correct_drafts=correct, num_proposed_drafts=proposed,
    )  # fmt: skip


def ratio_stderr(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
    """Standard error of sum(num)/sum(den), clustered by row (delta method)."""
    n = len(numerator)
    if n < 2:
        return None
    ratio = numerator.sum() / denominator.sum()
    residual = numerator - ratio * denominator
    variance = float(np.sum(residual**2)) / (n * (n - 1))
    return math.sqrt(variance) / float(np.mean(denominator))


def per_position_acceptance(histograms: Iterable[Sequence[int]]) -> list[float]:
    """Share of verify steps that accepted the draft at position 1, 2, ... (from histograms)."""
    total = np.zeros(0, dtype=float)
    for hist in histograms:
        hist_arr = np.asarray(hist, dtype=float)
        if len(hist_arr) > len(total):
            total = np.pad(total, (0, len(hist_arr) - len(total)))
        total[: len(hist_arr)] += hist_arr
    steps = total.sum()
    if steps == 0:
        return []
    at_least = np.cumsum(total[::-1])[::-1]  # at_least[i] = steps with >= i correct drafts
    return [float(x / steps) for x in at_least[1:]]


def server_accept_length(
    server_info: ServerInfo, verify_by_rank: Mapping[str, float] | None = None
) -> float | None:
    """``avg_spec_accept_length`` from /server_info over DP ranks; None when absent.

    Each rank's figure is accepted tokens over its own verify steps, so the server's figure is
    their mean weighted by each rank's verify steps (``verify_by_rank``: the window's
    ``spec_verify_calls_total`` delta per ``dp_rank`` label, rank i being ``internal_states[i]``).
    Without those weights it is the plain mean, exact only for a single rank.
    """
    values = server_info.accept_length_by_rank
    if not values:
        return None
    weights = {r: float((verify_by_rank or {}).get(r, 0.0)) for r in values}
    if len(values) > 1 and verify_by_rank and sum(weights.values()) > 0:
        return sum(values[r] * weights[r] for r in values) / sum(weights.values())
    return float(np.mean(list(values.values())))


# Why the ranks' figures cannot be weighted by SGLang's counters: spec_verify_calls_total is the
# tokenizer's, labelled model_name and engine_type only (0.5.19 tokenizer_manager.py lines
# 706-716; 0.5.23 observability/metrics_collector.py lines 1804-1819, 1865-1869); the per-rank
# series (sglang:spec_accept_length with dp_rank, metrics_collector.py lines 1382-1392) are gauges
# of the last decode log interval, and internal_states[i].avg_spec_accept_length is a ratio without
# its denominator (scheduler_components/internal_state.py lines 119-126, 243-253).
NO_RANK_COUNTERS = (
    "SGLang's spec_verify_calls_total carries no dp_rank label and /server_info gives each rank's "
    "ratio without its verify steps"
)


def server_accept(
    server_info: ServerInfo,
    verify_by_rank: Mapping[str, float] | None,
    records: Iterable[Mapping[str, Any]],
) -> tuple[float | None, str | None]:
    """The server's accept length over its DP ranks, and how the ranks were weighted.

    Weights, first that exists: each rank's verify steps from a ``dp_rank``-labelled counter
    (``verify_by_rank``), else those of the window's requests by their ``meta_info.dp_rank``
    (``spec.dp_rank`` of ``records``: every request must carry one, so not streams). Otherwise
    the plain mean, and the second value says so and why.

    Returns:
        (the figure, the weighting in words); the weighting is None with one rank.
    """
    ranks = server_info.accept_length_by_rank
    if len(ranks) <= 1:
        return server_accept_length(server_info), None
    if verify_by_rank and sum(verify_by_rank.values()) > 0:
        return server_accept_length(server_info, verify_by_rank), "verify steps per dp_rank label"
    by_request = request_verify_by_rank(records)
    if by_request and sum(by_request.values()) > 0:
        weighted = server_accept_length(server_info, by_request)
        return weighted, "verify steps of the window's requests per meta_info.dp_rank"
    why = (
        f"unweighted mean of {len(ranks)} DP ranks: {NO_RANK_COUNTERS}, and the window's replies "
        "carry no meta_info.dp_rank (streamed, or meta_info missing)"
    )
    return server_accept_length(server_info), why


def request_verify_by_rank(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Verify steps per ``spec.dp_rank`` over ``records``; empty when any lacks its rank."""
    out: dict[str, float] = {}
    for spec in spec_records(records):
        rank = spec.get("dp_rank")
        if not isinstance(rank, int):
            return {}
        out[str(rank)] = out.get(str(rank), 0.0) + float(spec["verify_ct"])
    return out


def cross_check(
    per_request: AcceptBlock, server_value: float | None, rel_tolerance: float
) -> CrossCheck:
    """Compare the server-level accept length with the per-request totals.

    SGLang only folds whole decode log intervals (40 iterations by default) into its lifetime
    totals, so short runs differ by a few percent; beyond ``rel_tolerance`` it is a warning.
    """
    expected = per_request.server_equivalent_accept_length
    return agreement("server", server_value, expected, rel_tolerance)


def agreement(
    source: Source, observed: float | None, expected: float | None, rel_tolerance: float
) -> CrossCheck:
    """``observed`` (named ``source``) against the per-request ``expected``, relative tolerance.

    ``agrees`` is None when either figure is missing.
    """
    if observed is None or expected is None:
        return CrossCheck(observed, expected, None, None, source)
    rel = abs(observed - expected) / expected
    return CrossCheck(observed, expected, rel, rel <= rel_tolerance, source)
