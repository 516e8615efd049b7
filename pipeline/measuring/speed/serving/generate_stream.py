"""A streaming native ``/generate`` request from token ids, read as the chat stream is read.

Why: ``serving.prompts=eval:NAME`` sends an eval's prompts cut to a bucket's length as token ids,
which SGLang's chat endpoint cannot take (its messages are text). SGLang streams ``/generate`` as
``data: {"text", "output_ids", "meta_info"}`` events, then ``data: [DONE]``; an error raised once
the stream has started is ``data: {"error": {"message": ...}}`` before ``[DONE]``
(``entrypoints/http_server.py``'s ``generate_request``). ``meta_info`` carries the running
``completion_tokens`` on every event, and ``prompt_tokens``, ``finish_reason`` and the ``spec_*``
keys on the finished one (``tokenizer_manager.py``; ``evals.reply_meta`` reads those keys).

So the figures mean what the chat stream's do: an arrival is an event that brings output tokens
(``completion_tokens`` grew; the chat stream's is a content chunk), the output and prompt tokens
are the server's own counts (the chat stream's ``usage``), and the verify steps are
``meta_info.spec_verify_ct`` (the chat stream's ``sglext`` copy of the same counter). Failures are
the eval client's kinds, retried by its policy (``evals.retry_policy``), so ``errors`` counts
alike on both paths.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiohttp

from evals.eval_conf import ClientConf
from evals.http_post import RequestOutcome, SessionOwner, budget_of, post_attempt, with_retries
from evals.replies import Attempt, Unfinished, read_sse
from evals.reply_meta import abort_detail, exact_int, spec_from_fields
from evals.responses import ChatResult, ResponseFormatError, StreamError


def _meta(raw: object, index: int) -> dict[str, Any]:
    """An event's ``meta_info``; an error event raises what the chat stream's error does."""
    if type(raw) is not dict:
        raise ResponseFormatError(f"chunks[{index}]: expected a JSON object")
    error = raw.get("error")
    if error is not None:
        said = error.get("message") if type(error) is dict else error
        raise StreamError(f"chunks[{index}]: the server sent an error: {said!s:.200}", None)
    meta = raw.get("meta_info")
    if type(meta) is not dict:
        raise ResponseFormatError(f"chunks[{index}].meta_info: expected a JSON object")
    return meta


def generate_stream_result(chunks: Sequence[object], times: Sequence[float]) -> ChatResult:
    """A ``/generate`` stream's events (``[DONE]`` excluded) and arrival times, as a result.

    Its text is not kept (nothing here reads it); ``arrivals`` are the events that brought
    output tokens.

    Raises:
        StreamError: the server sent an error event.
        ResponseFormatError: an event is not an object with ``meta_info``, or there is none.
    """
    arrivals: list[float] = []
    seen, last = 0, None
    for index, (raw, at) in enumerate(zip(chunks, times, strict=True)):
        last = _meta(raw, index)
        tokens = exact_int(last.get("completion_tokens")) or 0
        if tokens > seen:
            arrivals.append(at)
            seen = tokens
    if last is None:
        raise ResponseFormatError("the stream carried no event before [DONE]")
    finish = last.get("finish_reason")
    completion = exact_int(last.get("completion_tokens"))
    message, status = abort_detail(last)
    return ChatResult(
        content=None, reasoning_content=None,
        finish_reason=str(finish.get("type")) if type(finish) is dict else None,
        prompt_tokens=exact_int(last.get("prompt_tokens")), completion_tokens=completion,
        spec=spec_from_fields(last, completion, "meta_info"), finish_message=message,
        finish_status=status, arrivals=tuple(arrivals),
    )  # fmt: skip


class GenerateClient(SessionOwner):
    """Streaming ``/generate`` requests over one aiohttp session: ``async with`` it, then ``send``.

    The session's pool and timeout are the eval client's (``ClientConf``), as are its retries.
    """

    def __init__(self, base_url: str, conf: ClientConf) -> None:
        self.url, self.conf = base_url.rstrip("/") + "/generate", conf
        self.budget = budget_of(conf)
        self._session = None

    async def send(self, body: dict[str, object]) -> RequestOutcome:
        """Send one streaming request, retried as the eval client retries; never raises."""
        data = json.dumps(body).encode()
        return await with_retries(lambda: self._attempt(data), self.budget)

    async def _attempt(self, data: bytes) -> Attempt:
        if self._session is None:
            raise RuntimeError("GenerateClient is not open: use `async with GenerateClient(...)`.")
        timeout_s = self.conf.request_timeout_s
        return await post_attempt(self._session, self.url, data, timeout_s, _read_generate)


async def _read_generate(response: aiohttp.ClientResponse) -> ChatResult:
    chunks, times, done = await read_sse(response)
    if not done:
        raise Unfinished(f"the stream ended after {len(chunks)} events without [DONE]")
    return generate_stream_result(chunks, times)
