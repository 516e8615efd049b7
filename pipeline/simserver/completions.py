"""``/v1/chat/completions`` and ``/generate``: faults, generation, responses and the ledger.

Per request: draw the rate fault, wait the configured latency and the prompt's prefill time,
generate every choice, apply the stop faults (crash / hang once enough requests were answered),
count the request, write the ledger, then answer (or break the answer as the fault says).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import time
import uuid
from typing import Any

from aiohttp import web

from pipeline.simserver import aborts, payloads
from pipeline.simserver.faults import rate_fault, stop_fault
from pipeline.simserver.jobs import BadRequest, Job, parse_chat, parse_generate
from pipeline.simserver.logprob_replies import LogprobRequestError, cell_model, reply
from pipeline.simserver.model import Completion
from pipeline.simserver.runtime import Runtime, answer, ledger_row, prefill_time
from pipeline.simserver.served import Served
from pipeline.simserver.spec import SpecDraw
from pipeline.simserver.state import Ledger, ServerState
from pipeline.simserver.streaming import stream_chat, stream_generate
from pipeline.simserver.timing import batch_decode_s, batch_prefill_s

log = logging.getLogger("sglang.simserver")

_INTERNAL_ERROR = payloads.error_body("Internal server error", "InternalServerError", 500)
# Whole but not JSON (a value is missing inside it): a server bug, not a reply cut short, which a
# proxy in front of the server produces (tests/helpers/fault_proxy.py).
_MALFORMED = b'{"id": "sim", "object": "chat.completion", "choices": [{"index": 0, "message": }]}'


def json_response(body: Any, status: int = 200) -> web.Response:
    """A JSON response without aiohttp's slower dumps wrapper."""
    return web.Response(
        body=json.dumps(body).encode(), status=status, content_type="application/json"
    )


def bad_request(message: str) -> web.Response:
    """HTTP 400 with SGLang's error object."""
    return json_response(payloads.error_body(message, "BadRequestError", 400), 400)


class CompletionHandlers:
    """The two generation endpoints over one runtime, state and ledger."""

    def __init__(self, rt: Runtime, state: ServerState, ledger: Ledger) -> None:
        self.rt, self.state, self.ledger = rt, state, ledger
        self.model = str(rt.args["served_model_name"])

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """POST /v1/chat/completions."""
        try:
            job = parse_chat(await _json_body(request), self.model, self.rt.conf.prompt_tokens)
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
            attempt = state.attempt(key)
            fault = rate_fault(rt.faults, rt.conf.seed, key, attempt)
            if fault == "rate_limit":  # a gateway's refusal: nothing generated or counted
                return _rate_limited(rt.faults.retry_after)
            if rt.latency_s:
                await asyncio.sleep(rt.latency_s)
            cut = fault in ("truncation", "abort")
            served = await self._generate(job, cut, received, attempt)
            try:
                served = self._with_logprobs(job, served, attempt)
            except LogprobRequestError as exc:
                return bad_request(str(exc))
            if fault == "abort":  # cut where the abort reached it, no answer stated
                served = [_aborted(s) for s in served]
            stop = stop_fault(rt.faults, state.completed)
            if stop is not None:
                self._log_rows(served, job, stop)
                await _stop(stop)
            if fault == "http_5xx":
                self._log_rows(served, job, fault)
                return json_response(_INTERNAL_ERROR, 500)
            rank = state.record(served, job.stream)
            served = [dataclasses.replace(s, dp_rank=rank) for s in served]
            state.completed += 1
            self._log_rows(served, job, fault or self._spec_fault())
            response = await self._respond(request, job, served, fault)
            if rt.faults.exit_after_requests == state.completed:
                await _answer_then_exit(request, response)
            return response
        finally:
            state.in_flight -= 1

    def _with_logprobs(self, job: Job, served: list[Served], attempt: int) -> list[Served]:
        """Each choice's logprobs and sampled ids, when the request asked for them."""
        ask = job.logprobs
        if ask is None:
            return served
        model = self.rt.logprobs or cell_model(self.rt.conf, self.rt.targets.matched, 0)
        out = []
        for i, (s, item) in enumerate(zip(served, job.items, strict=True)):
            ids = item.ids or tuple(payloads.token_id(w) for w in item.prompt.split()) or (0,)
            lp = reply(model, ask, ids, s.completion_tokens, f"{attempt}:{i}")
            out.append(dataclasses.replace(s, logprobs=lp))
        return out

    def _spec_fault(self) -> str | None:
        missing = self.rt.faults.missing_spec_keys and self.rt.spec_on
        return "missing_spec_keys" if missing else None

    async def _generate(
        self, job: Job, truncated: bool, received: float, attempt: int
    ) -> list[Served]:
        if self.rt.timing is not None:
            return await self._generate_timed(job, truncated, received, attempt)
        # One prefill for the whole request (its choices, or a /generate batch), as long as its
        # longest prompt's; each choice reports its own prompt's span from the same start.
        forward = time.time()
        prefill = [prefill_time(self.rt, item.prompt_tokens) for item in job.items]
        if max(prefill, default=0.0) > 0:
            await asyncio.sleep(max(prefill))
        answers = self._answers(job, truncated, attempt)
        ends = [forward + p for p in prefill]
        return self._served(job, answers, (received, forward), ends, [time.time()] * len(ends))

    async def _generate_timed(
        self, job: Job, truncated: bool, received: float, attempt: int
    ) -> list[Served]:
        # The latency table: one prefill pass over the batch, then its decode steps together.
        model, key = self.rt.timing, job.items[0].prompt
        assert model is not None
        forward = time.time()
        prefill = batch_prefill_s(model, [item.prompt_tokens for item in job.items], key)
        await asyncio.sleep(prefill)
        answers = self._answers(job, truncated, attempt)
        steps = [spec.verify_ct if spec else len(c.tokens) for c, spec in answers]
        others = max(self.state.in_flight - 1, 0)  # the other requests decoding meanwhile
        decode = batch_decode_s(model, steps, key, others)
        ends = [forward + prefill] * len(answers)
        if job.stream:  # its chunks go out as decoding goes (streaming.paced), not at the end
            done = [time.time() + decode] * len(ends)
            return self._served(job, answers, (received, forward), ends, done)
        await asyncio.sleep(decode)
        return self._served(job, answers, (received, forward), ends, [time.time()] * len(ends))

    def _answers(
        self, job: Job, truncated: bool, attempt: int
    ) -> list[tuple[Completion, SpecDraw | None]]:
        # draw: the prompt's request and choice, a fresh sample each
        cap, eos = job.cap, job.ignore_eos
        return [
            answer(
                self.rt,
                item.prompt,
                item.question,
                cap,
                truncated,
                f"{attempt}:{i}",
                eos,
                item.prompt_tokens,
            )
            for i, item in enumerate(job.items)
        ]

    def _served(
        self,
        job: Job,
        answers: list[tuple[Completion, SpecDraw | None]],
        start: tuple[float, float],
        prefill_ends: list[float],
        finished: list[float],
    ) -> list[Served]:
        rid = uuid.uuid4().hex
        return [
            Served(rid if i == 0 else f"{rid}_{i}", completion, item.prompt_tokens, spec,
                   *start, prefill_ends[i], finished[i])
            for i, (item, (completion, spec)) in enumerate(zip(job.items, answers, strict=True))
        ]  # fmt: skip

    def _log_rows(self, served: list[Served], job: Job, fault: str | None) -> None:
        for i, s in enumerate(served):
            row = ledger_row(self.rt, s, job.endpoint, i, fault, job.stream)
            # What was prompted, without its text: tests match it to the ids they expect, and
            # after how many cache flushes (a prompt met twice between two flushes is a cache hit).
            prompt = job.items[i].prompt if i < len(job.items) else ""
            digest = hashlib.sha256(prompt.encode()).hexdigest()
            self.ledger.write({**row, "prompt_sha256": digest, "flushes": self.state.flushes})

    async def _respond(
        self, request: web.Request, job: Job, served: list[Served], fault: str | None
    ) -> web.StreamResponse:
        status = self.rt.faults.abort_status
        if fault == "abort" and status is not None and not job.stream:
            return json_response(aborts.abort_http_body(status), status)
        if fault == "missing_meta_info":
            job = dataclasses.replace(job, want_meta=False, want_spec=False)
        if fault == "connection_reset" and not job.stream:
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=200)
        if fault == "malformed_json" and not job.stream:
            return web.Response(body=_MALFORMED, content_type="application/json")
        flavour = self.rt.flavour
        if job.stream and job.endpoint == "chat":
            error = aborts.stream_error_event(status) if fault == "abort" and status else None
            return await stream_chat(request, served, flavour, job, fault, error)
        if job.stream:
            return await stream_generate(request, served[0], flavour, fault)
        sent = time.time()
        if job.endpoint == "generate":
            out = [payloads.generate_response(s, flavour, sent) for s in served]
            return json_response(out if job.batch else out[0])
        body = payloads.chat_response(
            served, flavour, job.model, job.want_meta, job.want_spec, sent
        )
        if fault == "invalid_utf8":
            raw = aborts.not_utf8(json.dumps(body).encode())
            return web.Response(body=raw, content_type="application/json")
        return json_response(body)


def _aborted(s: Served) -> Served:
    completion = dataclasses.replace(s.completion, finish_reason="abort", correct=None, answer=None)
    return dataclasses.replace(s, completion=completion)


def _rate_limited(retry_after: str | None) -> web.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = json.dumps(aborts.rate_limited_body()).encode()
    return web.Response(body=body, status=429, content_type="application/json", headers=headers)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


async def _answer_then_exit(request: web.Request, response: web.StreamResponse) -> None:
    """Send this answer in full, then end the process at once (a server stopped by someone)."""
    if not response.prepared:
        await response.prepare(request)
    await response.write_eof()
    log.error("Simulated stop after the last answer (exit_after_requests)")
    logging.shutdown()
    os._exit(137)


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
