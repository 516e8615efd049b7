"""What SGLang says about one reply beside its text: speculative statistics, prefill time, abort.

Two places carry per-request speculative statistics
(SGLang's ``serving_chat.py`` and ``tokenizer_manager.py``):
``choices[i].meta_info`` (with ``return_meta_info``; 0.5.17-0.5.20 add the aliases
``spec_accepted_drafts``/``spec_proposed_drafts``/``spec_accept_histogram``, 0.5.21 drops them)
and ``sglext.spec_tokens_details`` (with ``return_spec_tokens_details``; one object for n == 1,
a list for n > 1). ``sglext`` is preferred; a reply with neither gives no statistics.
The prefill time comes from ``meta_info``'s timestamps (``--enable-metrics``). Nothing here
raises: a key absent or of the wrong type reads as None. ``evals.responses`` parses the body
around these and is where callers import them from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecStats:
    """Speculative-decoding statistics of one request."""

    verify_ct: int
    num_correct_drafts: int
    num_proposed_drafts: int
    completion_tokens: int
    accept_length: float
    accept_rate: float
    histogram: tuple[int, ...]
    source: str  # "meta_info" | "sglext"
    # The DP rank that served the request (meta_info.dp_rank, 0.5.19 tokenizer_manager.py line
    # 2324, 0.5.23 line 2617); None with one rank or without meta_info (a stream).
    dp_rank: int | None = None


# Canonical key first, then the 0.5.17-0.5.20 alias that 0.5.21 removed.
_INT_KEYS = {
    "verify_ct": ("spec_verify_ct",),
    "num_correct_drafts": ("spec_num_correct_drafts", "spec_accepted_drafts"),
    "num_proposed_drafts": ("spec_num_proposed_drafts", "spec_proposed_drafts"),
}
_HISTOGRAM_KEYS = ("spec_correct_drafts_histogram", "spec_accept_histogram")


# Exact type checks: JSON decoding yields exactly dict/list/int/float, a bool is never a count,
# and these run on every response (isinstance against an ABC showed in the request rate).
def exact_int(value: object) -> int | None:
    """``value`` if it is exactly a JSON integer (not a bool), else None."""
    return value if type(value) is int else None


def _float(value: object) -> float | None:
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:  # a JSON integer beyond float range
            return None
    return None


def _first(source: dict[str, Any], keys: Sequence[str]) -> object:
    for key in keys:
        if key in source:
            return source[key]
    return None


def _histogram(source: dict[str, Any]) -> tuple[int, ...]:
    raw = _first(source, _HISTOGRAM_KEYS)
    if type(raw) is not list or not all(type(v) is int for v in raw):
        return ()
    return tuple(raw)


def spec_from_fields(
    source: object, completion_tokens: int | None, origin: str
) -> SpecStats | None:
    """Read SGLang's ``spec_*`` keys from a meta_info dict or a ``spec_tokens_details`` object.

    Args:
        source: the dict holding the keys (anything else gives None).
        completion_tokens: the request's completion tokens; when unknown it is recovered as
            ``round(accept_length * verify_ct)``, which is how SGLang defines accept length.
        origin: recorded as ``SpecStats.source`` ("meta_info" or "sglext").

    Returns:
        The statistics, or None when a required key is missing or has the wrong type
        (a non-speculative server, or SGLang's ``spec_verify_ct == 0`` case).
    """
    if type(source) is not dict:
        return None
    ints = {name: exact_int(_first(source, keys)) for name, keys in _INT_KEYS.items()}
    length = _float(source.get("spec_accept_length"))
    rate = _float(source.get("spec_accept_rate"))
    if None in ints.values() or length is None or rate is None:
        return None
    verify_ct = ints["verify_ct"] or 0
    if completion_tokens is None:
        scale = _float(verify_ct)
        recovered = None if scale is None else _float(length * scale)
        if recovered is None:
            return None
        completion_tokens = round(recovered)
    return SpecStats(
        verify_ct=verify_ct,
        num_correct_drafts=ints["num_correct_drafts"] or 0,
        num_proposed_drafts=ints["num_proposed_drafts"] or 0,
        completion_tokens=completion_tokens,
        accept_length=length,
        accept_rate=rate,
        histogram=_histogram(source),
        source=origin,
    )


# meta_info timestamps (time.time() of the scheduler) that SGLang adds with --enable-metrics.
PREFILL_START_KEY = "forward_entry_time"
PREFILL_END_KEY = "prefill_finished_time"


def prefill_seconds(meta: object) -> float | None:
    """The server's own prefill time of one request: ``prefill_finished_time - forward_entry_time``.

    Both are wall-clock timestamps of SGLang's scheduler, present in ``meta_info`` only when the
    server runs with ``--enable-metrics``. The span is not this request's prefill alone: with
    chunked prefill, or other requests prefilled or decoded in the same batches, their work
    falls inside it too, so compare it across cells run with the same load.

    Args:
        meta: a choice's ``meta_info`` (anything else gives None).

    Returns:
        Seconds, or None when a key is absent or not a finite number, or the span is negative.
    """
    if type(meta) is not dict:
        return None
    start, end = _float(meta.get(PREFILL_START_KEY)), _float(meta.get(PREFILL_END_KEY))
    if start is None or end is None or end < start:
        return None
    return end - start


# SGLang's ``FINISH_ABORT.to_json`` (srt/managers/schedule_batch.py: 0.5.19 line 289, 0.5.23 line
# 332, alike in both): {"type": "abort", "message": ..., "status_code": ..., "err_type": ...}.
ABORT = "abort"


def abort_detail(meta: object) -> tuple[str | None, int | None]:
    """The message and HTTP status of an aborted reply's ``meta_info.finish_reason``.

    Returns ``(None, None)`` when the reply has no meta_info (a stream) or did not abort; a
    graceful abort (``/abort_request``, a client gone) carries no status.
    """
    finish = meta.get("finish_reason") if type(meta) is dict else None
    if type(finish) is not dict or finish.get("type") != ABORT:
        return None, None
    message = finish.get("message")
    return (str(message) if message is not None else None), exact_int(finish.get("status_code"))


def _details_for_choice(sglext: object, choice: int) -> object:
    if type(sglext) is not dict:
        return None
    details = sglext.get("spec_tokens_details")
    if isinstance(details, list):  # n > 1: one entry per choice
        return details[choice] if 0 <= choice < len(details) else None
    return details if choice == 0 else None


def choice_spec(
    sglext: object, meta: object, choice: int, completion_tokens: int | None
) -> SpecStats | None:
    """A choice's speculative statistics: ``sglext``'s details first, else its ``meta_info``."""
    from_sglext = spec_from_fields(_details_for_choice(sglext, choice), completion_tokens, "sglext")
    return from_sglext or spec_from_fields(meta, completion_tokens, "meta_info")
