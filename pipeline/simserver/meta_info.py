"""``meta_info`` of one choice, keys and order as SGLang writes them (pure).

Its groups (storage waits, scheduler times, logprobs, spec keys, client times) are the
``total=False`` types of ``reply_types``; each is there or not as the release, the flags and the
request decide. 0.5.19 also carries the backward-compatible spec aliases
``spec_accepted_drafts``, ``spec_proposed_drafts`` and ``spec_accept_histogram`` that 0.5.21
removed (``tokenizer_manager.py`` of each wheel, benchmarks/results/sglang-rules.md).
"""

from __future__ import annotations

from pipeline.simserver.aborts import abort_finish
from pipeline.simserver.reply_types import (
    AbortFinish,
    ClientTimes,
    LengthFinish,
    LogprobKeys,
    MetaInfo,
    SchedulerTimes,
    SpecKeys,
    SpecTokensDetails,
    StopFinish,
    StorageWaits,
)
from pipeline.simserver.served import EOS_TOKEN_ID, Flavour, Served

_NO_SPEC: SpecKeys = {}
_NO_LOGPROBS: LogprobKeys = {}


def finish_reason_obj(s: Served) -> StopFinish | LengthFinish | AbortFinish:
    """``meta_info.finish_reason``: ``{"type": "stop", "matched": id}``, ``length`` or ``abort``."""
    if s.completion.finish_reason == "abort":
        return abort_finish()
    if s.completion.finish_reason == "length":
        return {"type": "length", "length": s.completion_tokens}
    return {"type": "stop", "matched": EOS_TOKEN_ID}


def spec_meta(s: Served, f: Flavour) -> SpecKeys:
    """The ``spec_*`` keys of ``meta_info`` (empty when SGLang would not add them)."""
    d = s.spec
    if d is None or d.verify_ct == 0 or not f.spec_keys:
        return {}
    proposed = d.num_proposed(f.num_draft_tokens)
    out: SpecKeys = {
        "spec_accept_rate": d.accept_rate(f.num_draft_tokens),
        "spec_accept_length": s.completion_tokens / d.verify_ct,
        "spec_num_correct_drafts": d.num_correct_drafts,
        "spec_num_proposed_drafts": proposed,
        "spec_verify_ct": d.verify_ct,
    }
    if f.aliases:
        out["spec_accepted_drafts"] = d.num_correct_drafts
        out["spec_proposed_drafts"] = proposed
    out["spec_correct_drafts_histogram"] = list(d.histogram)
    if f.aliases:
        out["spec_accept_histogram"] = list(d.histogram)
    return out


def _scheduler_times(s: Served, f: Flavour, dispatched: float) -> SchedulerTimes:
    if not f.timing_fields:  # received <= dispatched <= forward entry <= prefill finished
        return {}
    return {"forward_entry_time": s.forward_entry, "prefill_finished_time": s.prefill_finished,
            "queue_time": s.forward_entry - dispatched}  # fmt: skip


def _client_times(s: Served, f: Flavour, dispatched: float, sent: float) -> ClientTimes:
    if not f.timing_fields:
        return {}
    e2e = max(s.finished - s.received, 1e-6)
    out: ClientTimes = {"request_received_ts": s.received}
    if f.surface.meta_first_token_latency:
        out["first_token_latency"] = s.prefill_finished - s.received
    out["api_server_dispatch_finish_ts"] = dispatched
    out["request_finished_ts"] = s.finished
    out["decode_throughput"] = s.completion_tokens / e2e
    out["response_sent_to_client_ts"] = sent
    return out


def meta_info(s: Served, f: Flavour, sent: float, cut: int | None = None) -> MetaInfo:
    """The full ``meta_info`` of one choice, keys in SGLang's order.

    ``cut``: a streamed ``/generate`` chunk before the last: its tokens so far, no finish reason
    and no spec keys (SGLang adds them on the finished chunk only).
    """
    n = s.completion_tokens
    dispatched = (s.received + s.forward_entry) / 2  # made up, but in order
    storage: StorageWaits = {}
    if f.surface.meta_storage_waits:
        storage = {"storage_prefetch_wait": 0.0, "storage_staging_wait": 0.0}
    return {
        "id": s.rid,
        "finish_reason": finish_reason_obj(s) if cut is None else None,
        "prompt_tokens": s.prompt_tokens,
        "weight_version": "default",
        "num_retractions": 0,
        **storage,
        **_scheduler_times(s, f, dispatched),
        **(s.logprobs.meta if s.logprobs is not None else _NO_LOGPROBS),  # after the time stats
        "reasoning_tokens": 0,
        "completion_tokens": n if cut is None else cut,
        "cached_tokens": 0,
        "weight_versions": [{"version": "default", "start": 0, "end": n}],
        "cached_tokens_details": None,
        "dp_rank": s.dp_rank,
        "e2e_latency": max(s.finished - s.received, 1e-6),
        **(spec_meta(s, f) if cut is None else _NO_SPEC),
        **_client_times(s, f, dispatched, sent),
    }


def spec_tokens_details(s: Served, f: Flavour) -> SpecTokensDetails | None:
    """``sglext.spec_tokens_details`` of one choice (None when it has no spec statistics)."""
    spec = spec_meta(s, f)
    if not spec:
        return None
    return {
        "spec_accept_rate": spec["spec_accept_rate"],
        "spec_accept_length": spec["spec_accept_length"],
        "spec_cap_length": 0.0,
        "spec_block_accept_length": 0.0,
        "spec_num_correct_drafts": spec["spec_num_correct_drafts"],
        "spec_num_proposed_drafts": spec["spec_num_proposed_drafts"],
        "spec_verify_ct": spec["spec_verify_ct"],
        "spec_correct_drafts_histogram": spec["spec_correct_drafts_histogram"],
        "spec_cap_lens_histogram": [],
    }
