"""SGLang's per-request HTTP surface: the flags a chat request sets, and its response parsed.

Every per-request key is here or in ``evals.reply_meta`` (the server side is
``backends.server_info``): a new SGLang release's request flags or response keys are an edit of
these two modules and their fixtures; callers import both's names from here.

Speculative statistics come from ``sglext`` or ``meta_info`` (``reply_meta`` says which and
how); a response with neither gives ``spec=None``. A stream, which has no meta_info, gives
``prefill_s=None``.
Structural garbage raises ``ResponseFormatError`` naming the field; nothing else is raised.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evals.reply_meta import (
    ABORT,
    PREFILL_END_KEY,
    PREFILL_START_KEY,
    SpecStats,
    abort_detail,
    choice_spec,
    exact_int,
    prefill_seconds,
    spec_from_fields,
)

# reply_meta's names are re-exported: callers import SGLang's per-request surface from here.
__all__ = [
    "ABORT", "PREFILL_END_KEY", "PREFILL_START_KEY", "ChatResult", "ResponseFormatError",
    "SpecStats", "StreamError", "abort_detail", "parse_chat_response", "parse_chat_stream",
    "prefill_seconds", "spec_from_fields", "stats_request_flags",
]  # fmt: skip

# Request flags that make SGLang return per-request statistics (``openai/protocol.py``): the
# sglext details (0.5.19+) on every request; the full meta_info only without streaming, since
# SGLang rejects ``return_meta_info`` on a stream.
META_INFO_FLAG = "return_meta_info"
SPEC_DETAILS_FLAG = "return_spec_tokens_details"


def stats_request_flags(stream: bool) -> dict[str, bool]:
    """The body fields a chat request adds so that its response carries accept statistics.

    Args:
        stream: whether the request streams (then only the ``sglext`` details are asked for).
    """
    flags = {} if stream else {META_INFO_FLAG: True}
    return {**flags, SPEC_DETAILS_FLAG: True}


class ResponseFormatError(ValueError):
    """A response body does not have the shape of an OpenAI chat completion."""


@dataclass(frozen=True)
class ChatResult:
    """What an eval needs from one chat completion."""

    content: str | None
    reasoning_content: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    spec: SpecStats | None
    prefill_s: float | None = None  # see ``prefill_seconds``
    # ``meta_info.finish_reason``'s message and HTTP status of an aborted reply (``FINISH_ABORT``)
    finish_message: str | None = None
    finish_status: int | None = None
    # A stream's content chunks' arrival times (time.perf_counter; the serving phase's TTFT and
    # inter-token latency); empty for a reply that was not streamed.
    arrivals: tuple[float, ...] = ()


def _require_dict(value: object, field: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise ResponseFormatError(f"{field}: expected a JSON object, got {type(value).__name__}")
    return value


def _optional_str(container: dict[str, Any], key: str, field: str) -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise ResponseFormatError(f"{field}.{key}: expected a string or null, got {value!r:.80}")
    return value


def _pick_choice(body: dict[str, Any], choice: int) -> dict[str, Any]:
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise ResponseFormatError(f"choices: expected a list, got {type(choices).__name__}")
    if not 0 <= choice < len(choices):
        raise ResponseFormatError(f"choices[{choice}]: missing (the response has {len(choices)})")
    return _require_dict(choices[choice], f"choices[{choice}]")


def _tokens(usage: object, meta: object) -> tuple[int | None, int | None]:
    # meta_info is per choice (right for n > 1); usage sums over choices.
    sources = [src for src in (meta, usage) if type(src) is dict]
    out: list[int | None] = [None, None]
    for position, key in enumerate(("prompt_tokens", "completion_tokens")):
        for src in sources:
            if (value := exact_int(src.get(key))) is not None:
                out[position] = value
                break
    return out[0], out[1]


def parse_chat_response(body: object, choice: int = 0) -> ChatResult:
    """Parse a non-streaming ``/v1/chat/completions`` body.

    Args:
        body: the decoded JSON body.
        choice: which of the ``n`` choices to read.

    Returns:
        The choice's content, reasoning, finish reason, token counts and speculative stats.

    Raises:
        ResponseFormatError: the body, ``choices``, the choice or its ``message`` is malformed.
    """
    body = _require_dict(body, "body")
    picked = _pick_choice(body, choice)
    field = f"choices[{choice}]"
    message = _require_dict(picked.get("message"), f"{field}.message")
    meta = picked.get("meta_info")
    prompt_tokens, completion_tokens = _tokens(body.get("usage"), meta)
    finish_message, finish_status = abort_detail(meta)
    spec = choice_spec(body.get("sglext"), meta, choice, completion_tokens)
    if spec is not None and type(meta) is dict and exact_int(meta.get("dp_rank")) is not None:
        spec = dataclasses.replace(spec, dp_rank=exact_int(meta.get("dp_rank")))
    return ChatResult(
        content=_optional_str(message, "content", f"{field}.message"),
        reasoning_content=_optional_str(message, "reasoning_content", f"{field}.message"),
        finish_reason=_optional_str(picked, "finish_reason", field),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        spec=spec,
        prefill_s=prefill_seconds(meta),
        finish_message=finish_message,
        finish_status=finish_status,
    )


class StreamError(ResponseFormatError):
    """The server put an error object into a stream instead of (more) chunks.

    SGLang does so for an abort that carries an HTTP status (a timeout, memory pressure, a
    validation failure: ``serving_chat.py`` 0.5.19 lines 1627-1642, 0.5.23 lines 2562-2579)
    and for an exception once the stream has started (0.5.19 lines 1801-1805):
    ``data: {"error": {"object": "error", "message": ..., "type": ..., "param": null,
    "code": 503}}`` (``serving_base.create_streaming_error_response``), then ``[DONE]``.
    """

    def __init__(self, message: str, code: int | None) -> None:
        super().__init__(message)
        self.code = code


def _stream_error(chunk: dict[str, Any], index: int) -> ResponseFormatError:
    # SGLang reports a failure inside a stream as a chunk with an error object and no choices.
    error = chunk.get("error")
    if type(error) is dict:
        code = exact_int(error.get("code"))
        said = f"{error.get('message')!s:.200}"
        return StreamError(f"chunks[{index}]: the server sent an error (code {code}): {said}", code)
    detail = chunk.get("message") or error
    suffix = f" (server said: {detail!s:.200})" if detail else ""
    return ResponseFormatError(f"chunks[{index}].choices: missing{suffix}")


@dataclass
class _StreamState:
    """What a stream has said so far about one choice."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish: str | None = None
    usage: object = None
    sglext: object = None
    seen: bool = False

    def add_delta(self, item: dict[str, Any], where: str) -> None:
        self.seen = True
        delta = _require_dict(item.get("delta", {}), f"{where}.delta")
        for parts, key in ((self.content, "content"), (self.reasoning, "reasoning_content")):
            piece = _optional_str(delta, key, f"{where}.delta")
            if piece is not None:
                parts.append(piece)
        self.finish = _optional_str(item, "finish_reason", where) or self.finish


def parse_chat_stream(chunks: Sequence[object], choice: int = 0) -> ChatResult:
    """Assemble decoded SSE chunks of a streaming chat completion.

    Content and reasoning deltas of choice ``choice`` are concatenated; the last non-null
    ``finish_reason``, ``usage`` and ``sglext`` (SGLang sends it in a separate
    ``{"choices": [], "sglext": ...}`` chunk before the usage chunk) win.

    Args:
        chunks: the decoded ``data:`` payloads, ``[DONE]`` excluded.
        choice: which choice index to assemble.

    Returns:
        The assembled result.

    Raises:
        ResponseFormatError: a chunk is not an object, lacks ``choices``, or no chunk carries
            the choice.
    """
    state = _StreamState()
    for index, raw in enumerate(chunks):
        chunk = _require_dict(raw, f"chunks[{index}]")
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise _stream_error(chunk, index)
        state.usage = chunk["usage"] if type(chunk.get("usage")) is dict else state.usage
        state.sglext = chunk["sglext"] if type(chunk.get("sglext")) is dict else state.sglext
        for position, item in enumerate(choices):
            where = f"chunks[{index}].choices[{position}]"
            if _require_dict(item, where).get("index", 0) == choice:
                state.add_delta(item, where)
    if not state.seen:
        raise ResponseFormatError(f"choices[{choice}]: no chunk of the stream carried it")
    prompt_tokens, completion_tokens = _tokens(state.usage, None)
    details = state.sglext.get("spec_tokens_details") if isinstance(state.sglext, dict) else None
    if isinstance(details, list) and len(details) > 1:
        # n > 1: usage sums every choice; the choice's own count comes from its statistics
        # (spec_accept_length x spec_verify_ct, exact since SGLang divides the one by the other).
        completion_tokens = None
    spec = choice_spec(state.sglext, None, choice, completion_tokens)
    if completion_tokens is None and spec is not None:
        completion_tokens = spec.completion_tokens
    return ChatResult(
        content="".join(state.content) if state.content else None,
        reasoning_content="".join(state.reasoning) if state.reasoning else None,
        finish_reason=state.finish,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        spec=spec,
    )
