"""Response bodies with SGLang's key names and order (pure).

Shapes follow ``tests/data/live-sglang-<release>/`` (what 0.5.23 changes is in ``surface``'s
table): chat completions with ``choices[i].meta_info``
and ``sglext.spec_tokens_details``, native ``/generate`` and the SSE chunks of a chat stream.
0.5.19 also carries the backward-compatible aliases ``spec_accepted_drafts``,
``spec_proposed_drafts`` and ``spec_accept_histogram`` that 0.5.21 removed (``tokenizer_manager.py``
of each wheel, benchmarks/results/sglang-rules.md).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from pipeline.simserver.aborts import abort_finish
from pipeline.simserver.logprob_replies import LogprobReply
from pipeline.simserver.model import Completion
from pipeline.simserver.reply_types import (
    AbortFinish,
    ChatBody,
    ChatChoice,
    ChatMessage,
    Chunk,
    ClientTimes,
    Delta,
    DeltaChoice,
    ErrorBody,
    GenerateBody,
    LengthFinish,
    LogprobKeys,
    MetaInfo,
    SchedulerTimes,
    SglExt,
    SpecKeys,
    SpecTokensDetails,
    StopFinish,
    StorageWaits,
    Usage,
)
from pipeline.simserver.spec import SpecDraw
from pipeline.simserver.surface import SPEC_ALIAS_RELEASES, SimSurface, surface_for

EOS_TOKEN_ID = 151645  # what "matched" reports for a natural stop (a Qwen-style EOS id)
_NO_SPEC: SpecKeys = {}
_NO_LOGPROBS: LogprobKeys = {}


@dataclass(frozen=True)
class Flavour:
    """What the imitated server version and its flags put into responses."""

    version: str
    num_draft_tokens: int  # 0 without speculation
    timing_fields: bool  # --enable-metrics adds per-request timestamps to meta_info
    spec_keys: bool = True  # False under the missing_spec_keys fault

    @property
    def surface(self) -> SimSurface:
        """The imitated release's table entry (which response keys it has)."""
        return surface_for(self.version)

    @property
    def aliases(self) -> bool:
        """Whether this version still emits the spec aliases (0.5.20 and before)."""
        return self.version in SPEC_ALIAS_RELEASES


@dataclass(frozen=True)
class Served:
    """One generated choice with everything its response parts need."""

    rid: str
    completion: Completion
    prompt_tokens: int
    spec: SpecDraw | None  # None without speculation
    received: float  # time.time() when the request arrived
    forward_entry: float  # time.time() when its prefill began (after the configured latency)
    prefill_finished: float  # forward_entry + its prompt's simulated prefill time
    finished: float  # time.time() when generation ended
    dp_rank: int | None = None  # the DP rank that served it (None with one rank)
    logprobs: LogprobReply | None = None  # with return_logprob: the ids and meta_info keys

    @property
    def completion_tokens(self) -> int:
        """Tokens in the (possibly cut) completion."""
        return len(self.completion.tokens)

    @property
    def text(self) -> str:
        """The completion's text."""
        return "".join(self.completion.tokens)


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


def sglext(served: list[Served], f: Flavour) -> SglExt | None:
    """``{"spec_tokens_details": ...}``: one object for n == 1, a list for n > 1."""
    details = [spec_tokens_details(s, f) for s in served]
    if all(d is None for d in details):
        return None
    return {"spec_tokens_details": details[0] if len(details) == 1 else details}


def usage(served: list[Served], f: Flavour) -> Usage:
    """OpenAI ``usage`` with SGLang's extra keys."""
    prompt = served[0].prompt_tokens
    completion = sum(s.completion_tokens for s in served)
    out: Usage = {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
    }
    if f.surface.usage_completion_details:
        out["completion_tokens_details"] = None
    return out


def _chat_choice(i: int, s: Served, f: Flavour, want_meta: bool, sent: float) -> ChatChoice:
    message: ChatMessage = {"role": "assistant", "content": s.text, "reasoning_content": None}
    if f.surface.tool_calls_key:
        message["tool_calls"] = None
    choice: ChatChoice = {
        "index": i,
        "message": message,
        "logprobs": None,
        "finish_reason": s.completion.finish_reason,
        "matched_stop": EOS_TOKEN_ID if s.completion.finish_reason == "stop" else None,
    }
    if want_meta:
        choice["meta_info"] = meta_info(s, f, sent)
    return choice


def chat_response(
    served: list[Served], f: Flavour, model: str, want_meta: bool, want_spec: bool, sent: float
) -> ChatBody:
    """A non-streaming ``chat.completion`` body."""
    total = sum(s.completion_tokens for s in served)
    body: ChatBody = {
        "id": served[0].rid,
        "object": "chat.completion",
        "created": int(served[0].received),
        "model": model,
        "choices": [_chat_choice(i, s, f, want_meta, sent) for i, s in enumerate(served)],
        "usage": usage(served, f),
        "metadata": {
            "weight_version": "default",
            "weight_versions": [{"version": "default", "start": 0, "end": total}],
        },
    }
    ext = sglext(served, f) if want_spec else None
    if ext is not None:
        body["sglext"] = ext
    return body


def chunk(rid: str, created: int, model: str, choices: list[DeltaChoice], f: Flavour) -> Chunk:
    """One ``chat.completion.chunk`` of a stream (``usage: null`` unless the release omits it)."""
    out: Chunk = {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }
    if not f.surface.stream_finish_apart:
        out["usage"] = None
    return out


def delta_choice(
    index: int, content: str | None, role: bool, finish: str | None, f: Flavour
) -> DeltaChoice:
    """A streamed choice: a piece of content (None: none, live 0.5.23's finish chunk)."""
    delta: Delta = {}
    if f.surface.stream_finish_apart:  # live 0.5.23's key order
        delta["reasoning_content"] = None
    if role:
        delta["role"] = "assistant"
    if not f.surface.stream_finish_apart:
        delta["content"] = content
        delta["reasoning_content"] = None
        delta["tool_calls"] = None
    elif content is not None:
        delta["content"] = content
    return {
        "index": index,
        "delta": delta,
        "logprobs": None,
        "finish_reason": finish,
        "matched_stop": EOS_TOKEN_ID if finish == "stop" else None,
    }


def token_id(word: str) -> int:
    """A stable fake token id for a word (``output_ids`` of ``/generate``)."""
    return 100 + zlib.crc32(word.encode()) % 32000


def generate_response(s: Served, f: Flavour, sent: float, cut: int | None = None) -> GenerateBody:
    """A native ``/generate`` body: text, output_ids and meta_info.

    ``cut``: a streamed chunk before the last, its text and ids the first ``cut`` tokens.
    """
    ids = [token_id(t) for t in s.completion.tokens]
    if s.logprobs is not None:
        ids = list(s.logprobs.output_ids)
    text = s.text if cut is None else "".join(s.completion.tokens[:cut])
    ids = ids if cut is None else ids[:cut]
    return {"text": text, "output_ids": ids, "meta_info": meta_info(s, f, sent, cut)}


def error_body(message: str, kind: str, code: int) -> ErrorBody:
    """SGLang's OpenAI-style error object."""
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}
