"""The serving phase of a cell: a concurrency sweep per input-length bucket on its own server.

Why the eval client (``evals/client.py``) and streaming chat: it is the path users' requests take
(HTTP, the chat template, the tokenizer manager, detokenizing) and the one the evals measure
through, so TTFT and inter-token latency include what a user waits for; the speed phase's
``meta_info`` spans leave exactly that out. Each level keeps ``concurrency`` requests in flight
over its prompts (a fixed pool of workers: a closed loop, as ``sglang.bench_serving
--max-concurrency`` runs), stops sending after ``serving.max_seconds`` and reads the server's own
``/metrics`` counters before and after, beside the client's figures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Sequence

from evals.client import ChatClient, RequestOutcome
from evals.eval_conf import ClientConf
from pipeline.config.schema import ServingConf
from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.speed.run import context_length
from pipeline.measuring.speed.serving.plan import Level, chat_body, levels, prompt_text
from pipeline.measuring.speed.serving.stats import Sample, counters, deltas, point
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import ServingJson, ServingPointJson
from pipeline.serving import server_api

log = logging.getLogger(__name__)

METHOD = (
    "streaming /v1/chat/completions through the eval client, a closed loop of `concurrency` "
    "requests in flight; TTFT = first content chunk - send, ITL = gaps between content chunks, "
    "TPOT = (last chunk - first) / (output tokens - 1), tokens/s per user = 1 / median TPOT; "
    "output tokens/s = the level's completion tokens / (last answer - first send)"
)


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
    client: ChatClient, level: Level, conf: ServingConf, serial0: int
) -> tuple[list[Sample], int, bool]:
    """Every request of a level: its samples, its errors and whether the time cap cut it."""
    pending = iter(range(serial0, serial0 + level.requests))
    samples: list[Sample] = []
    errors, cut = 0, False
    deadline = time.perf_counter() + conf.max_seconds

    async def worker() -> None:
        nonlocal errors, cut
        for serial in pending:
            if time.perf_counter() > deadline:
                cut = True
                return
            body = chat_body(prompt_text(conf.seed, serial, level.bucket), conf.output_tokens)
            sent = time.perf_counter()
            got = _sample(sent, await client.chat({**body, "stream": True, **_FLAGS}))
            errors += got is None
            samples.extend([got] if got else [])

    await asyncio.gather(*(worker() for _ in range(level.concurrency)))
    return samples, errors, cut


# What build_chat_payload adds to a streaming request: usage, and the sglext spec details.
_FLAGS = {"stream_options": {"include_usage": True}, "return_spec_tokens_details": True}


async def _warm(client: ChatClient, conf: ServingConf, bucket: int) -> None:
    for serial in range(conf.warmup):
        body = chat_body(prompt_text(conf.seed + 1, serial, bucket), conf.output_tokens)
        await client.chat({**body, "stream": True, **_FLAGS})


async def run_sweep(
    target: ServingTarget, conf: ServingConf, plan: Sequence[Level]
) -> tuple[list[ServingPointJson], list[str]]:
    """Every level of ``plan`` in order through one client: its points, and notes of cut levels."""
    points, notes, warmed = [], [], set()
    top = max((lv.concurrency for lv in plan), default=1)
    client_conf = dataclasses.replace(
        target.client, concurrency=top, stream=True, progress=False,
        request_timeout_s=conf.request_timeout_s,
    )  # fmt: skip
    async with ChatClient(target.base_url, target.model, client_conf) as client:
        for i, level in enumerate(plan):
            if level.bucket not in warmed:
                await _warm(client, conf, level.bucket)
                warmed.add(level.bucket)
            before = counters(server_api.metrics_text(target.base_url, target.client.api_key))
            samples, errors, cut = await _run_level(client, level, conf, i * 100_000)
            after = counters(server_api.metrics_text(target.base_url, target.client.api_key))
            points.append(point(level, samples, errors, target.gpus, deltas(before, after)))
            log.info("serving: bucket %d, concurrency %d: %d requests",
                     level.bucket, level.concurrency, len(samples))  # fmt: skip
            if cut:
                notes.append(
                    f"bucket {level.bucket}, concurrency {level.concurrency}: stopped after "
                    f"serving.max_seconds={conf.max_seconds:g} with {len(samples)} answered"
                )
    return points, notes


def serving_phase(conf: ServingConf, target: ServingTarget, result: ResultDraft) -> None:
    """Run the sweep on the cell's server and set the result's ``serving`` block.

    Raises:
        MeasureError: every request of a level failed (the block so far is kept).
    """
    start = time.perf_counter()
    plan, notes = levels(conf, context_length(target.base_url, target.client.api_key))
    block: ServingJson = {
        "method": METHOD, "speculation": conf.speculation, "gpus": target.gpus,
        "prompts": "random common words, each prompt its own serial (no shared prefix)",
        "concurrency": list(conf.concurrency), "buckets": list(conf.buckets),
        "output_tokens": conf.output_tokens, "notes": notes, "points": [],
    }  # fmt: skip
    points, cut_notes = asyncio.run(run_sweep(target, conf, plan))
    block["points"], block["notes"] = points, notes + cut_notes
    block["wall_s"] = time.perf_counter() - start
    result.set_serving(block)
    dead = [p for p in points if not p.get("requests")]
    if dead:
        first = dead[0]
        raise MeasureError(
            "serving",
            f"serving phase: no request answered at bucket {first.get('bucket')}, concurrency "
            f"{first.get('concurrency')} ({first.get('errors')} errors): see server.log",
        )
