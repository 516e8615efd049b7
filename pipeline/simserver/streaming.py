"""Server-sent-event streams of ``/v1/chat/completions`` and ``/generate``.

A chat stream sends a role chunk, content chunks (the finish reason on the last one per choice),
then ``{"choices": [], "sglext": ...}`` when spec details were asked for, the usage chunk when
``stream_options.include_usage`` is set, and ``data: [DONE]``. Faults: ``malformed_json`` sends a
chunk that is not JSON and stops; ``connection_reset`` drops the connection after the first chunk;
``stream_error`` sends an error object after it and ends with ``[DONE]``; ``invalid_utf8`` makes
the first content chunk invalid UTF-8. An abort with an HTTP status sends the content so far, the
error object in place of the finish chunk, then usage and ``[DONE]`` (``aborts.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from aiohttp import web

from pipeline.simserver import aborts, payloads
from pipeline.simserver.jobs import Job
from pipeline.simserver.reply_types import DeltaChoice, StreamError
from pipeline.simserver.served import Flavour, Served

TOKENS_PER_CHUNK = 4
_BROKEN_CHUNK = b'data: {"id": "sim", "object": "chat.completion.chunk", "choices": [{\n\n'


async def _open(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    return resp


def _event(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


async def _fault_break(request: web.Request, resp: web.StreamResponse, fault: str | None) -> bool:
    """Apply a stream fault after the first chunk; True when the stream must end now."""
    if fault == "malformed_json":
        await resp.write(_BROKEN_CHUNK)
        return True
    if fault == "connection_reset":
        if request.transport is not None:
            request.transport.abort()
        return True
    if fault == "stream_error":
        await resp.write(_event(aborts.stream_error_event(500, "simulated stream_error")))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return True
    return False


class Pacer:
    """When each content chunk of a stream is due: spread evenly up to the decode's end.

    With the latency table a streamed request's decode is not slept before the answer: its
    ``finished`` lies ahead, and each chunk waits for its share of the time up to it, so a
    client sees its first token after the prefill and the rest at the decode's pace (TTFT and
    inter-token latency as a server's). Without it ``finished`` has passed: no wait.
    """

    def __init__(self, finished: float, chunks: int) -> None:
        self.start, self.finished, self.chunks, self.sent = time.time(), finished, max(chunks, 1), 0

    async def next(self) -> None:
        """Wait for the next chunk's due time."""
        self.sent += 1
        due = self.start + (self.finished - self.start) * self.sent / self.chunks
        if due > time.time():
            await asyncio.sleep(due - time.time())


def _pieces(tokens: tuple[str, ...]) -> list[str]:
    return [
        "".join(tokens[i : i + TOKENS_PER_CHUNK]) for i in range(0, len(tokens), TOKENS_PER_CHUNK)
    ] or [""]


def _content_choices(index: int, s: Served, flavour: Flavour) -> list[DeltaChoice]:
    """One choice's content chunks, the finish reason on the last or (0.5.23) on its own."""
    pieces = _pieces(s.completion.tokens)
    finish = s.completion.finish_reason
    if flavour.surface.stream_finish_apart:
        out = [payloads.delta_choice(index, p, False, None, flavour) for p in pieces if p]
        return [*out, payloads.delta_choice(index, None, False, finish, flavour)]
    last = len(pieces) - 1
    return [
        payloads.delta_choice(index, p, False, finish if j == last else None, flavour)
        for j, p in enumerate(pieces)
    ]


async def stream_chat(
    request: web.Request,
    served: list[Served],
    flavour: Flavour,
    job: Job,
    fault: str | None,
    error: StreamError | None = None,
) -> web.StreamResponse:
    """Stream a chat completion (all choices, one after the other).

    ``error``: the error object that replaces the finish chunks (an abort with a status).
    """
    resp = await _open(request)
    rid, created, model = served[0].rid, int(served[0].received), job.model
    first = [payloads.delta_choice(i, "", True, None, flavour) for i in range(len(served))]
    await resp.write(_event(payloads.chunk(rid, created, model, first, flavour)))
    if await _fault_break(request, resp, fault):
        return resp
    broken = fault == "invalid_utf8"
    pacer = Pacer(served[0].finished, sum(len(_pieces(s.completion.tokens)) for s in served))
    for i, s in enumerate(served):
        for choice in _content_choices(i, s, flavour):
            if choice["delta"].get("content"):
                await pacer.next()
            if error is not None and choice["finish_reason"] is not None:
                break  # SGLang sends the error object instead of the finish chunk
            event = payloads.chunk(rid, created, model, [choice], flavour)
            await resp.write(aborts.event_not_utf8(event) if broken else _event(event))
            broken = False
    if error is not None:
        await resp.write(_event(error))
    if job.want_spec:
        ext = payloads.sglext(served, flavour)
        if ext is not None:
            ext_chunk = payloads.chunk(rid, created, model, [], flavour)
            ext_chunk["sglext"] = ext
            await resp.write(_event(ext_chunk))
    if job.include_usage:
        usage_chunk = payloads.chunk(rid, created, model, [], flavour)
        usage_chunk["usage"] = payloads.usage(served, flavour)
        await resp.write(_event(usage_chunk))
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


async def stream_generate(
    request: web.Request, s: Served, flavour: Flavour, fault: str | None
) -> web.StreamResponse:
    """Stream a /generate completion: cumulative text and output_ids, meta_info on the last."""
    resp = await _open(request)
    tokens = s.completion.tokens
    ends = [*range(TOKENS_PER_CHUNK, len(tokens), TOKENS_PER_CHUNK), len(tokens)]
    pacer = Pacer(s.finished, len(ends))
    for j, end in enumerate(ends):
        await pacer.next()
        cut = end if end < len(tokens) else None
        await resp.write(_event(payloads.generate_response(s, flavour, time.time(), cut)))
        if j == 0 and await _fault_break(request, resp, fault):
            return resp
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp
