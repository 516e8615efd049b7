"""The serving phase of a cell: a concurrency sweep per input-length bucket on its own server.

Why the eval client (``evals/client.py``) and streaming chat: it is the path users' requests take
(HTTP, the chat template, the tokenizer manager, detokenizing) and the one the evals measure
through, so TTFT and inter-token latency include what a user waits for; the speed phase's
``meta_info`` spans leave exactly that out. An eval's prompts (``serving.prompts=eval:NAME``) are
token ids, which the chat endpoint cannot take: they stream from native ``/generate``
(``generate_stream``), read so that every figure means what it means on the chat path, with the
radix cache flushed before every level (``sources``). Each level keeps ``concurrency`` requests in
flight over its prompts (a fixed pool of workers: a closed loop, as ``sglang.bench_serving
--max-concurrency`` runs), stops sending after ``serving.max_seconds`` and reads the server's own
``/metrics`` counters before and after, beside the client's figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from evals.client import ChatClient, RequestOutcome
from evals.eval_conf import ClientConf
from pipeline.config.schema import ServingConf
from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.speed.prompts import EvalPools
from pipeline.measuring.speed.run import context_length
from pipeline.measuring.speed.serving.generate_stream import GenerateClient
from pipeline.measuring.speed.serving.plan import Level, levels
from pipeline.measuring.speed.serving.sources import Body, Sweep, sweep_of
from pipeline.measuring.speed.serving.stats import Sample, counters, deltas, point
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import ServingJson, ServingPointJson
from pipeline.serving import server_api

log = logging.getLogger(__name__)
Send = Callable[[Body], Awaitable[RequestOutcome]]


@dataclasses.dataclass(frozen=True)
class ServingTarget:
    """Where the phase's requests go and what it divides by: the server, model name, GPUs."""

    base_url: str
    model: str
    client: ClientConf
    gpus: int


def _sample(sent: float, outcome: RequestOutcome) -> Sample | None:
    result = outcome.result
    if result is None or outcome.error_kind is not None:
        return None
    spec = result.spec
    tokens = result.completion_tokens or 0
    return Sample(sent, result.arrivals, time.perf_counter(), tokens, result.prompt_tokens,
                  spec.verify_ct if spec else None)  # fmt: skip


async def _run_level(
    send: Send, level: Level, conf: ServingConf, body_of: Callable[[int], Body]
) -> tuple[list[Sample], int, bool]:
    """Every request of a level: its samples, its errors and whether the time cap cut it."""
    pending = iter(range(level.requests))
    samples: list[Sample] = []
    errors, cut = 0, False
    deadline = time.perf_counter() + conf.max_seconds

    async def worker() -> None:
        nonlocal errors, cut
        for request in pending:
            if time.perf_counter() > deadline:
                cut = True
                return
            body = body_of(request)
            sent = time.perf_counter()
            got = _sample(sent, await send(body))
            errors += got is None
            samples.extend([got] if got else [])

    await asyncio.gather(*(worker() for _ in range(level.concurrency)))
    return samples, errors, cut


@contextlib.asynccontextmanager
async def _sender(target: ServingTarget, conf: ClientConf, native: bool) -> AsyncIterator[Send]:
    """One client for the sweep: ``/generate`` for token ids, else the eval client's chat."""
    if native:
        async with GenerateClient(target.base_url, conf) as generate:
            yield generate.send
    else:
        async with ChatClient(target.base_url, target.model, conf) as chat:
            yield chat.chat


def _flush(target: ServingTarget) -> None:
    """Empty the server's radix cache (idle between levels), as the speed phase does.

    Raises:
        MeasureError: the server refused; the levels measured before stay in the block.
    """
    key = target.client.admin_api_key or target.client.api_key  # the admin key opens it if set
    try:
        server_api.flush_cache(target.base_url, key)
    except server_api.ServerApiError as err:
        raise MeasureError("serving", f"serving: before a level: {err}") from err


async def run_sweep(
    target: ServingTarget, conf: ServingConf, sweep: Sweep, points: list[ServingPointJson]
) -> list[str]:
    """Every level of ``sweep`` in order through one client into ``points``; notes of cut levels.

    Raises:
        MeasureError: the server refused a flush (``points`` keeps the levels before it).
    """
    notes, warmed = [], set()
    top = max((lv.concurrency for lv in sweep.levels), default=1)
    client_conf = dataclasses.replace(
        target.client, concurrency=top, stream=True, progress=False,
        request_timeout_s=conf.request_timeout_s,
    )  # fmt: skip
    async with _sender(target, client_conf, sweep.native) as send:
        for i, level in enumerate(sweep.levels):
            if level.bucket not in warmed:
                for body in sweep.warmup(level.bucket):
                    await send(body)
                warmed.add(level.bucket)
            if sweep.native:  # the eval's prompts: no level meets one an earlier request sent
                _flush(target)
            before = counters(server_api.metrics_text(target.base_url, target.client.api_key))
            body_of = functools.partial(sweep.body, i, level)
            samples, errors, cut = await _run_level(send, level, conf, body_of)
            after = counters(server_api.metrics_text(target.base_url, target.client.api_key))
            points.append(point(level, samples, errors, target.gpus, deltas(before, after)))
            log.info("serving: bucket %d, concurrency %d: %d requests",
                     level.bucket, level.concurrency, len(samples))  # fmt: skip
            if cut:
                notes.append(
                    f"bucket {level.bucket}, concurrency {level.concurrency}: stopped after "
                    f"serving.max_seconds={conf.max_seconds:g} with {len(samples)} answered"
                )
    return notes


def _block(conf: ServingConf, target: ServingTarget, sweep: Sweep, notes: list[str]) -> ServingJson:
    """The ``serving`` block before its levels run: what is measured, how and on what prompts."""
    block: ServingJson = {
        "method": sweep.method, "speculation": conf.speculation, "gpus": target.gpus,
        "prompts": sweep.prompts, "concurrency": list(conf.concurrency),
        "buckets": list(conf.buckets), "output_tokens": conf.output_tokens,
        "notes": notes + list(sweep.notes), "points": [],
    }  # fmt: skip
    if sweep.eval_prompts is not None:
        block["eval_prompts"] = sweep.eval_prompts
    return block


def serving_phase(
    conf: ServingConf, target: ServingTarget, result: ResultDraft, pools: EvalPools | None = None
) -> None:
    """Run the sweep on the cell's server and set the result's ``serving`` block.

    Args:
        conf: ``serving`` of the config.
        target: the cell's server, model name, client settings and GPUs.
        result: the cell's result; gets its ``serving`` block.
        pools: the evals' prompts ``serving.prompts=eval:NAME`` (or ``eval:PATTERN``) asks for,
            one pool per matched eval (None: random words).

    Raises:
        MeasureError: every request of a level failed, or the server refused a flush (the block
            so far is kept).
    """
    start = time.perf_counter()
    planned, notes = levels(conf, context_length(target.base_url, target.client.api_key))
    sweep = sweep_of(conf, planned, pools)
    block = _block(conf, target, sweep, notes)
    points = block["points"]
    try:
        block["notes"] += asyncio.run(run_sweep(target, conf, sweep, points))
    except MeasureError as err:
        block["error"] = str(err)
    block["wall_s"] = time.perf_counter() - start
    result.set_serving(block)
    if "error" in block:
        raise MeasureError("serving", block["error"])
    dead = [p for p in points if not p.get("requests")]
    if dead:
        first = dead[0]
        raise MeasureError(
            "serving",
            f"serving phase: no request answered at bucket {first.get('bucket')}, concurrency "
            f"{first.get('concurrency')} ({first.get('errors')} errors): see server.log",
        )
