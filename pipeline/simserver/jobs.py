"""Parsing of chat and generate request bodies into jobs (pure).

A job lists the prompts to answer: one per chat choice (``n``) or per ``/generate`` text. Bad
bodies raise ``BadRequest`` with the field and what it must be; the server answers 400 with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.simserver.logprob_replies import LogprobAsk, LogprobRequestError, parse_ask

MSG_META_STREAM = (
    "return_meta_info is not supported with streaming. "
    "Please set stream=false when using return_meta_info=true."
)
_DEFAULT_MAX_NEW_TOKENS = 128  # SGLang's sampling_params default


class BadRequest(ValueError):
    """A request SGLang would answer with HTTP 400."""


@dataclass(frozen=True)
class Item:
    """One prompt to answer (a chat choice or a /generate batch entry)."""

    prompt: str  # hashed: decides correctness, length, acceptance
    question: str  # searched for the question
    prompt_tokens: int
    ids: tuple[int, ...] | None = None  # /generate's input_ids (None: a text prompt)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass(frozen=True)
class Job:
    """A parsed chat or generate request."""

    endpoint: str  # chat | generate
    items: list[Item]
    cap: int | None  # max tokens per choice
    stream: bool
    model: str
    want_meta: bool = False  # return_meta_info
    want_spec: bool = False  # return_spec_tokens_details
    include_usage: bool = False  # stream_options.include_usage
    batch: bool = False  # /generate with a list of texts
    ignore_eos: bool = False  # sampling_params.ignore_eos: every choice runs to its cap
    logprobs: LogprobAsk | None = None  # return_logprob and its fields (/generate only)


def chat_bytes(texts: list[tuple[str, str]]) -> int:
    """Prompt tokens of the byte-level chat template (benchmarks/live_h200/synth_train.py).

    ``<|begin_of_text|>``; per message ``<|start_header|>``, the role, ``<|end_header|>``, a
    newline, the content, ``<|eot|>``; then the generation prompt (``assistant`` between the two
    header tokens, a newline): each special one token, each UTF-8 byte one token.
    """
    body = sum(len(role.encode()) + len(text.encode()) + 4 for role, text in texts)
    return 1 + body + 2 + len(b"assistant\n")


def parse_chat(body: dict[str, Any], default_model: str, count: str = "words") -> Job:
    """Read a chat request; one item per choice (``n``), each with its own hash key.

    ``count``: how ``prompt_tokens`` is counted (``words`` or ``bytes``: ``chat_bytes``).

    Raises:
        BadRequest: with the field and what it must be.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: expected a non-empty list of {role, content} objects")
    texts = [
        (m.get("role", ""), _text_of(m.get("content"))) for m in messages if isinstance(m, dict)
    ]
    prompt = "\n".join(f"{role}: {text}" for role, text in texts)
    question = next((t for r, t in reversed(texts) if r == "user"), prompt)
    tokens = (chat_bytes(texts) if count == "bytes"
              else sum(len(t.split()) for _, t in texts) + 4 * len(texts))  # fmt: skip
    n = 1 if body.get("n") is None else body["n"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise BadRequest(f"n={n!r}: expected a positive integer")
    # Choice i > 0 is another sample of the same prompt, so it gets a different hash key.
    items = [Item(prompt if i == 0 else f"{prompt}\x00{i}", question, tokens) for i in range(n)]
    stream = bool(body.get("stream"))
    if stream and body.get("return_meta_info"):
        raise BadRequest(MSG_META_STREAM)
    options = body.get("stream_options")
    return Job(
        endpoint="chat",
        items=items,
        cap=token_cap(body.get("max_completion_tokens") or body.get("max_tokens"), "max_tokens"),
        stream=stream,
        model=str(body.get("model") or default_model),
        want_meta=bool(body.get("return_meta_info")),
        want_spec=bool(body.get("return_spec_tokens_details")),
        include_usage=isinstance(options, dict) and bool(options.get("include_usage")),
        ignore_eos=bool(body.get("ignore_eos")),  # SGLang's chat takes it beside the OpenAI keys
    )


def parse_generate(body: dict[str, Any], default_model: str) -> Job:
    """Read a native /generate request (``text``, a list of texts, or ``input_ids``).

    Raises:
        BadRequest: with the field and what it must be.
    """
    texts, id_lists, batch = _generate_prompts(body)
    params = {} if body.get("sampling_params") is None else body["sampling_params"]
    if not isinstance(params, dict):
        raise BadRequest("sampling_params: expected an object")
    stream = bool(body.get("stream"))
    if stream and batch:
        raise BadRequest("stream=true is supported for a single text only")
    try:
        ask = parse_ask(body)
    except LogprobRequestError as exc:
        raise BadRequest(str(exc)) from exc
    # SGLang takes max_new_tokens 0 (a prefill only: sampling_params.py checks >= 0)
    limit = params.get("max_new_tokens", _DEFAULT_MAX_NEW_TOKENS)
    cap = 0 if limit == 0 and not isinstance(limit, bool) else token_cap(limit, "max_new_tokens")
    return Job(
        endpoint="generate",
        items=[Item(t, t, max(len(t.split()), 1), i) for t, i in zip(texts, id_lists, strict=True)],
        cap=cap,
        stream=stream,
        model=default_model,
        batch=batch,
        ignore_eos=bool(params.get("ignore_eos")),
        logprobs=ask,
    )


def _generate_prompts(
    body: dict[str, Any],
) -> tuple[list[str], list[tuple[int, ...] | None], bool]:
    """The texts of a /generate body, its input_ids (None per text prompt) and whether a batch."""
    text, ids = body.get("text"), body.get("input_ids")
    if text is None and isinstance(ids, list) and ids:
        lists = ids if isinstance(ids[0], list) else [ids]
        if not all(isinstance(x, int) and not isinstance(x, bool) for xs in lists for x in xs):
            raise BadRequest("input_ids: expected a list of token ids (or a list of such lists)")
        texts = [_ids_text(x) for x in lists]
        return texts, [tuple(x) for x in lists], isinstance(ids[0], list)
    if isinstance(text, str):
        return [text], [None], False
    if isinstance(text, list) and text and all(isinstance(t, str) for t in text):
        return list(text), [None] * len(text), True
    raise BadRequest("text: expected a string or a non-empty list of strings (or input_ids)")


def _ids_text(ids: list[Any]) -> str:
    return " ".join(map(str, ids))


def token_cap(value: Any, name: str) -> int | None:
    """A positive token limit or None."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadRequest(f"{name}={value!r}: expected a positive integer")
    return value
