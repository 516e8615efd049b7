"""``/v1/chat/completions`` and ``/generate``: request parsing, faults, responses, the ledger."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from pipeline.simserver import payloads
from pipeline.simserver.faults import rate_fault, stop_fault
from pipeline.simserver.payloads import Served
from pipeline.simserver.runtime import Runtime, answer, ledger_row
from pipeline.simserver.state import Ledger, ServerState
from pipeline.simserver.streaming import stream_chat, stream_generate

log = logging.getLogger("sglang.simserver")

MSG_META_STREAM = (
    "return_meta_info is not supported with streaming. "
    "Please set stream=false when using return_meta_info=true."
)
_DEFAULT_MAX_NEW_TOKENS = 128  # SGLang's sampling_params default
_INTERNAL_ERROR = payloads.error_body("Internal server error", "InternalServerError", 500)
_MALFORMED = b'{"id": "sim", "object": "chat.completion", "choices": [{"index": 0, "message": '


class BadRequest(ValueError):
    """A request SGLang would answer with HTTP 400."""


@dataclass(frozen=True)
class Item:
    """One prompt to answer (a chat choice or a /generate batch entry)."""

    prompt: str  # hashed: decides correctness, length, acceptance
    question: str  # searched for the question
    prompt_tokens: int


def json_response(body: Any, status: int = 200) -> web.Response:
    """A JSON response without aiohttp's slower dumps wrapper."""
    return web.Response(
        body=json.dumps(body).encode(), status=status, content_type="application/json"
    )


def bad_request(message: str) -> web.Response:
    """HTTP 400 with SGLang's error object."""
    return json_response(payloads.error_body(message, "BadRequestError", 400), 400)


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


def parse_chat(body: dict[str, Any], default_model: str) -> Job:
    """Read a chat request; one item per choice (``n``), each with its own hash key.

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
    tokens = sum(len(t.split()) for _, t in texts) + 4 * len(texts)
    n = body.get("n") or 1
    if not isinstance(n, int) or n < 1:
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
    )


def parse_generate(body: dict[str, Any], default_model: str) -> Job:
    """Read a native /generate request (``text``, a list of texts, or ``input_ids``).

    Raises:
        BadRequest: with the field and what it must be.
    """
    text = body.get("text")
    ids = body.get("input_ids")
    if text is None and isinstance(ids, list) and ids:
        text = [_ids_text(x) for x in ids] if isinstance(ids[0], list) else _ids_text(ids)
    if isinstance(text, str):
        texts, batch = [text], False
    elif isinstance(text, list) and text and all(isinstance(t, str) for t in text):
        texts, batch = list(text), True
    else:
        raise BadRequest("text: expected a string or a non-empty list of strings (or input_ids)")
    params = body.get("sampling_params") or {}
    if not isinstance(params, dict):
        raise BadRequest("sampling_params: expected an object")
    stream = bool(body.get("stream"))
    if stream and batch:
        raise BadRequest("stream=true is supported for a single text only")
    return Job(
        endpoint="generate",
        items=[Item(t, t, max(len(t.split()), 1)) for t in texts],
        cap=token_cap(params.get("max_new_tokens", _DEFAULT_MAX_NEW_TOKENS), "max_new_tokens"),
        stream=stream,
        model=default_model,
        batch=batch,
    )


def _ids_text(ids: list[Any]) -> str:
    return " ".join(map(str, ids))


def token_cap(value: Any, name: str) -> int | None:
    """A positive token limit or None."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadRequest(f"{name}={value!r}: expected a positive integer")
    return value


class CompletionHandlers:
    """The two generation endpoints over one runtime, state and ledger."""

    def __init__(self, rt: Runtime, state: ServerState, ledger: Ledger) -> None:
        self.rt, self.state, self.ledger = rt, state, ledger
        self.model = str(rt.args["served_model_name"])

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """POST /v1/chat/completions."""
        try:
            job = parse_chat(await _json_body(request), self.model)
        except BadRequest as exc:
            return bad_request(str(exc))
        return await self._serve(request, job)

    async def generate(self, request: web.Request) -> web.StreamResponse:
        """POST /generate (native API)."""
        try:
            job = parse_generate(await _json_body(request), self.model)
        except BadRequest as exc:
            return bad_request(str(exc))
        return await self._serve(request, job)

    async def _serve(self, request: web.Request, job: Job) -> web.StreamResponse:
        rt, state = self.rt, self.state
        received = time.time()
        state.in_flight += 1
        try:
            key = job.items[0].prompt
            fault = rate_fault(rt.faults, rt.conf.seed, key, state.attempt(key))
            if rt.latency_s:
                await asyncio.sleep(rt.latency_s)
            served = self._generate(job, fault == "truncation", received)
            stop = stop_fault(rt.faults, state.completed)
            if stop is not None:
                self._log_rows(served, job, stop)
                await _stop(stop)
            if fault == "http_5xx":
                self._log_rows(served, job, fault)
                return json_response(_INTERNAL_ERROR, 500)
            state.record(served, job.stream)
            state.completed += 1
            self._log_rows(served, job, fault or self._spec_fault())
            return await self._respond(request, job, served, fault)
        finally:
            state.in_flight -= 1

    def _spec_fault(self) -> str | None:
        missing = self.rt.faults.missing_spec_keys and self.rt.spec_on
        return "missing_spec_keys" if missing else None

    def _generate(self, job: Job, truncated: bool, received: float) -> list[Served]:
        rid = uuid.uuid4().hex
        out = []
        for i, item in enumerate(job.items):
            completion, spec = answer(self.rt, item.prompt, item.question, job.cap, truncated)
            sub = rid if i == 0 else f"{rid}_{i}"
            out.append(Served(sub, completion, item.prompt_tokens, spec, received, time.time()))
        return out

    def _log_rows(self, served: list[Served], job: Job, fault: str | None) -> None:
        for i, s in enumerate(served):
            self.ledger.write(ledger_row(self.rt, s, job.endpoint, i, fault, job.stream))

    async def _respond(
        self, request: web.Request, job: Job, served: list[Served], fault: str | None
    ) -> web.StreamResponse:
        if fault == "connection_reset" and not job.stream:
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=200)
        if fault == "malformed_json" and not job.stream:
            return web.Response(body=_MALFORMED, content_type="application/json")
        flavour = self.rt.flavour
        if job.stream and job.endpoint == "chat":
            return await stream_chat(request, served, flavour, job, fault)
        if job.stream:
            return await stream_generate(request, served[0], flavour, fault)
        sent = time.time()
        if job.endpoint == "generate":
            out = [payloads.generate_response(s, flavour, sent) for s in served]
            return json_response(out if job.batch else out[0])
        body = payloads.chat_response(
            served, flavour, job.model, job.want_meta, job.want_spec, sent
        )
        return json_response(body)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


async def _stop(kind: str) -> None:
    """Crash the process (taking in-flight requests down) or hang this request forever."""
    if kind == "crash_after_requests":
        log.error(
            "Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "sglang/srt/managers/scheduler.py", line 3012, in run_scheduler_process\n'
            "    scheduler.event_loop_overlap()\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered "
            "(simulated crash_after_requests)"
        )
        logging.shutdown()
        os._exit(1)
    await asyncio.Event().wait()
