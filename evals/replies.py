"""Reading one chat reply off the wire: server-sent events, and replies that did not finish.

A reply is *unfinished* when the server did not finish it: a stream that ends without
``[DONE]`` (a load balancer's idle timeout closes it cleanly, without a finish chunk), or a
body whose JSON stops mid-document. ``Unfinished`` says where it stopped; the client retries it
like a dropped connection and records ``unfinished`` when retries do not cure it. Where a cut can
leave the bytes (inside a literal, a number, an escape, a UTF-8 character):
``evals.cut_replies``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass

import aiohttp

from evals.cut_replies import cut_json, cut_utf8
from evals.responses import ABORT, ChatResult, parse_chat_response, parse_chat_stream
from evals.retry_policy import RATE_LIMITED, retry_after_s

ERROR_TEXT_LIMIT = 500


class Unfinished(Exception):
    """The reply ended before the server finished it; the message says where."""


class SseBuffer:
    """Incremental server-sent-events decoder: feed lines, get each event's data."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self.done = False  # "[DONE]" seen

    def feed(self, line: str) -> str | None:
        """Consume one line (without its newline); return an event's data when it completes."""
        if line:
            if line.startswith("data:"):
                self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            return None  # comments (":") and other fields carry nothing we use
        return self.flush()

    def flush(self) -> str | None:
        """End the current event (blank line or end of stream); return its data if any."""
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        if data.strip() == "[DONE]":
            self.done = True
            return None
        return data


def body_result(raw: bytes) -> ChatResult:
    """Parse a non-streaming reply's bytes.

    Raises:
        Unfinished: the JSON stops before the document ends.
        ResponseFormatError, ValueError: a body that is whole but not a chat completion.
    """
    text = _utf8(raw, "the body")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        if cut_json(exc, text):
            raise Unfinished(f"the body ends mid-JSON after {len(raw)} bytes") from exc
        raise
    return parse_chat_response(body)


def _utf8(raw: bytes, what: str) -> str:
    # A cut inside a multi-byte character is a cut like any other, not a body in another
    # encoding (that one is ``invalid_utf8``, retried once).
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut_utf8(exc, raw):
            said = f"{what} ends inside a UTF-8 character after {len(raw)} bytes"
            raise Unfinished(said) from exc
        raise


async def stream_result(response: aiohttp.ClientResponse) -> ChatResult:
    """Read a streaming reply to its end and assemble it.

    Raises:
        Unfinished: the stream ended without ``[DONE]`` or in the middle of an event.
        ResponseFormatError, ValueError: a whole event that is not a chat-completion chunk.
    """
    chunks, times, done = await read_sse(response)
    if not done:
        raise Unfinished(f"the stream ended after {len(chunks)} chunks without [DONE]")
    result = parse_chat_stream(chunks)
    return dataclasses.replace(result, arrivals=content_arrivals(chunks, times))


def content_arrivals(chunks: list[object], times: list[float]) -> tuple[float, ...]:
    """When each chunk carrying content or reasoning arrived (``time.perf_counter``).

    The serving phase's TTFT and inter-token latency read them; a role chunk, the finish
    chunk and the usage chunk carry no token and are left out.
    """
    out = []
    for chunk, at in zip(chunks, times, strict=True):
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        for item in choices if isinstance(choices, list) else []:
            delta = item.get("delta") if isinstance(item, dict) else None
            if isinstance(delta, dict) and (delta.get("content") or delta.get("reasoning_content")):
                out.append(at)
                break
    return tuple(out)


async def read_sse(
    response: aiohttp.ClientResponse,
) -> tuple[list[object], list[float], bool]:
    """A stream's decoded events, when each arrived (``time.perf_counter``) and whether it ended.

    Also read by the serving phase's native ``/generate`` stream
    (``pipeline/measuring/speed/serving/generate_stream.py``).

    Raises:
        Unfinished: the stream stops in the middle of an event.
    """
    # Read to the end even after [DONE]: a fully read response returns its connection to the
    # pool, a half-read one is closed. Each event's arrival time is kept (content_arrivals).
    buffer = SseBuffer()
    chunks: list[object] = []
    times: list[float] = []
    async for raw in response.content:
        data = buffer.feed(_utf8(raw, "the stream").rstrip("\r\n"))
        if data is not None and not buffer.done:
            chunks.append(json.loads(data))
            times.append(time.perf_counter())
    tail = buffer.flush()  # an event the stream did not end with a blank line
    if tail is not None and not buffer.done:
        try:
            chunks.append(json.loads(tail))
            times.append(time.perf_counter())
        except json.JSONDecodeError as exc:
            if not cut_json(exc, tail):
                raise
            raise Unfinished(f"the stream stops mid-event after {len(chunks)} chunks") from exc
    return chunks, times, buffer.done


@dataclass(frozen=True)
class Attempt:
    """One attempt's result, or why it failed and whether a retry can help."""

    result: ChatResult | None
    error_kind: str | None = None
    error: str | None = None
    status: int | None = None
    retry_after: float | None = None  # HTTP 429's Retry-After, in seconds
    curable: bool = True  # False: the reply says a retry cannot help


async def http_error(response: aiohttp.ClientResponse) -> Attempt:
    """A non-2xx reply as a failed attempt: 429 (with its Retry-After), 5xx, 4xx."""
    text = (await response.read()).decode("utf-8", errors="replace")
    message = f"HTTP {response.status}: {text[:ERROR_TEXT_LIMIT]}"
    if response.status == 429:
        header = response.headers.get("Retry-After")
        wait = retry_after_s(header, time.time())
        said = f" (Retry-After {header!r})" if header is not None else " (no Retry-After)"
        return Attempt(None, RATE_LIMITED, message + said, 429, retry_after=wait)
    kind = (
        "http_5xx"
        if response.status >= 500
        else "http_4xx"
        if response.status >= 400
        else "malformed"
    )
    return Attempt(None, kind, message, response.status)


def finished(result: ChatResult, status: int) -> Attempt:
    """A 2xx reply: an answer, or ``unfinished`` / ``aborted`` (no answer).

    What SGLang sends for an aborted request: ``tests/data/sglang-abort/README.md``.
    """
    if result.finish_reason is None:
        return Attempt(None, "unfinished", "the reply carries no finish_reason", status)
    if result.finish_reason == ABORT:
        # SGLang's abort without an error status (0.5.19 and 0.5.23 answer 200 with it): the
        # request was cancelled or evicted; its partial text is no answer. A 4xx abort (0.5.19
        # passes those through too) will abort again.
        code = result.finish_status
        said = f" (status {code})" if code is not None else ""
        message = f"the server aborted the reply{said}: {result.finish_message or 'no message'}"
        curable = code is None or code >= 500
        return Attempt(None, "aborted", message[:ERROR_TEXT_LIMIT], status, curable=curable)
    return Attempt(result, status=status)
