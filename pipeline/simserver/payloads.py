"""Response bodies with SGLang's key names and order (pure).

Shapes follow ``tests/data/live-sglang-<release>/`` (what 0.5.23 changes is in ``surface``'s
table): chat completions with ``choices[i].meta_info``
and ``sglext.spec_tokens_details``, native ``/generate`` and the SSE chunks of a chat stream;
``meta_info`` itself is ``meta_info.py``'s, the body types ``reply_types.py``'s.
"""

from __future__ import annotations

import zlib

from pipeline.simserver.meta_info import meta_info, spec_tokens_details
from pipeline.simserver.reply_types import (
    ChatBody,
    ChatChoice,
    ChatMessage,
    Chunk,
    Delta,
    DeltaChoice,
    ErrorBody,
    GenerateBody,
    SglExt,
    Usage,
)
from pipeline.simserver.served import EOS_TOKEN_ID, Flavour, Served


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
