"""The server's own timing of one ``/generate`` call, read from ``meta_info`` (pure).

With ``--enable-metrics`` SGLang stamps each request with ``forward_entry_time`` (its prefill
starts in the scheduler) and ``prefill_finished_time``, and ``request_finished_ts``; every
release gives ``e2e_latency`` and ``completion_tokens``. A batch's prefill is the span from its
first request's entry to its last request's prefill end; its decode, from its first prefill end
to its last request's end. No HTTP, JSON or tokenizer time falls inside either.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evals.responses import PREFILL_END_KEY, PREFILL_START_KEY, abort_detail


class SpeedTimingError(ValueError):
    """A ``/generate`` answer without the timing a speed phase needs."""


@dataclass(frozen=True)
class RequestTiming:
    """One request's timestamps (seconds, the scheduler's clock) and token counts."""

    forward_entry: float
    prefill_finished: float
    finished: float  # request_finished_ts, else forward_entry + e2e_latency
    completion_tokens: int
    verify_ct: int | None  # speculative verify steps (None: speculation off)


@dataclass(frozen=True)
class Spread:
    """The median of some repeats, with their min and max."""

    median: float
    low: float
    high: float


def _number(meta: dict[str, Any], key: str) -> float | None:
    value = meta.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None


def request_timing(meta: object) -> RequestTiming:
    """The timing of one request from its ``meta_info``.

    Raises:
        SpeedTimingError: a timestamp is missing (a server without ``--enable-metrics``), or
            SGLang aborted the request (``/generate`` answers an abort without a status with
            HTTP 200: ``tests/data/sglang-abort/README.md``), whose times measure a cut request.
    """
    if not isinstance(meta, dict):
        raise SpeedTimingError("a /generate answer without meta_info")
    message, status = abort_detail(meta)
    if message is not None or status is not None:
        raise SpeedTimingError(f"SGLang aborted a /generate request (status {status}): {message}")
    start, end = _number(meta, PREFILL_START_KEY), _number(meta, PREFILL_END_KEY)
    e2e, tokens = _number(meta, "e2e_latency"), meta.get("completion_tokens")
    if start is None or end is None or e2e is None or type(tokens) is not int:
        raise SpeedTimingError(
            f"meta_info lacks {PREFILL_START_KEY}, {PREFILL_END_KEY}, e2e_latency or "
            "completion_tokens: the speed phase needs server.enable_metrics=true "
            "(SGLang's --enable-metrics)"
        )
    finished = _number(meta, "request_finished_ts") or start + e2e
    verify = meta.get("spec_verify_ct")
    return RequestTiming(start, end, finished, tokens, verify if type(verify) is int else None)


def answer_timings(body: object) -> list[RequestTiming]:
    """Every request's timing in a ``/generate`` answer (one object, or a list for a batch)."""
    answers = body if isinstance(body, list) else [body]
    return [request_timing(a.get("meta_info") if isinstance(a, dict) else None) for a in answers]


def prefill_span_s(timings: Sequence[RequestTiming]) -> float:
    """From the first request's prefill start to the last one's prefill end."""
    return max(t.prefill_finished for t in timings) - min(t.forward_entry for t in timings)


def decode_span_s(timings: Sequence[RequestTiming]) -> float:
    """From the first prefill end to the last request's end."""
    return max(t.finished for t in timings) - min(t.prefill_finished for t in timings)


def decoded_tokens(timings: Sequence[RequestTiming]) -> int:
    """Tokens made by decoding: each request's first token comes from its prefill."""
    return sum(max(t.completion_tokens - 1, 0) for t in timings)


def accept_length(timings: Sequence[RequestTiming]) -> float | None:
    """Completion tokens per verify step over ``timings`` (SGLang's definition); None: no spec."""
    steps = [t.verify_ct for t in timings]
    if not steps or any(s is None for s in steps) or not sum(s or 0 for s in steps):
        return None
    return sum(t.completion_tokens for t in timings) / sum(s or 0 for s in steps)


def spread(values: Sequence[float]) -> Spread:
    """Median, min and max of ``values`` (at least one)."""
    return Spread(statistics.median(values), min(values), max(values))
