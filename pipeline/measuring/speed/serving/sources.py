"""Where a serving sweep's requests come from (pure): ``serving.prompts``, as a ``Sweep``.

``random``: streaming chat requests of random common words, each with its own serial
(``plan.prompt_text``), so no two share a prefix beyond the chat template's. ``eval:NAME``:
streaming native ``/generate`` requests of the eval's prompts as token ids, cut to each bucket
(``eval_prompts``; ``eval:PATTERN``: each bucket from one matched eval, ``bucket_sources``); they
share their template's and the eval's opening, so the radix cache is flushed before every level.
Both decode ``serving.output_tokens`` greedily with EOS ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.config.schema import ServingConf
from pipeline.measuring.speed.prompts import EvalPools
from pipeline.measuring.speed.serving.eval_prompts import (
    describe,
    eval_plan,
    generate_body,
    level_prompts,
    prompts_text,
    warmup_prompts,
)
from pipeline.measuring.speed.serving.plan import Level, chat_body, prompt_text
from pipeline.results.nested_schema import ServingPromptsJson

Body = dict[str, object]
_TIMES = (
    "TPOT = (last chunk - first) / (output tokens - 1), tokens/s per user = 1 / median TPOT; "
    "output tokens/s = the level's completion tokens / (last answer - first send)"
)
CHAT_METHOD = (
    "streaming /v1/chat/completions through the eval client, a closed loop of `concurrency` "
    "requests in flight; TTFT = first content chunk - send, ITL = gaps between content chunks, "
    + _TIMES
)
GENERATE_METHOD = (
    "streaming native /generate with input_ids, a closed loop of `concurrency` requests in "
    "flight, the eval client's retries; TTFT = first chunk that brings output tokens (its "
    "meta_info.completion_tokens grew) - send, ITL = gaps between such chunks, " + _TIMES + "; "
    "accept length from the finished chunk's meta_info.spec_verify_ct"
)
WORDS_TEXT = "random common words, each prompt its own serial (no shared prefix)"
# What a streaming chat request adds so that its reply says its usage and verify steps (sglext).
CHAT_FLAGS: Body = {"stream_options": {"include_usage": True}, "return_spec_tokens_details": True}
SERIALS_PER_LEVEL = 100_000  # random prompts of level i start at serial i x this


@dataclass(frozen=True)
class Sweep:
    """The levels to run, what each request sends and what result.json says of the prompts."""

    levels: tuple[Level, ...]
    notes: tuple[str, ...]  # levels and buckets the prompts could not fill, and why
    body: Callable[[int, Level, int], Body]  # (level's place in the sweep, level, request) -> body
    warmup: Callable[[int], list[Body]]  # bucket -> the warm-up's bodies
    native: bool  # True: /generate with ids, the radix cache flushed before every level
    method: str
    prompts: str
    eval_prompts: ServingPromptsJson | None = None


def _chat(text: str, output_tokens: int) -> Body:
    return {**chat_body(text, output_tokens), "stream": True, **CHAT_FLAGS}


def word_sweep(conf: ServingConf, levels: Sequence[Level]) -> Sweep:
    """``serving.prompts=random``: every level as planned, random words through the chat path."""

    def body(index: int, level: Level, request: int) -> Body:
        serial = index * SERIALS_PER_LEVEL + request
        return _chat(prompt_text(conf.seed, serial, level.bucket), conf.output_tokens)

    def warmup(bucket: int) -> list[Body]:
        texts = [prompt_text(conf.seed + 1, serial, bucket) for serial in range(conf.warmup)]
        return [_chat(text, conf.output_tokens) for text in texts]

    return Sweep(tuple(levels), (), body, warmup, False, CHAT_METHOD, WORDS_TEXT)


def eval_sweep(conf: ServingConf, levels: Sequence[Level], pools: EvalPools) -> Sweep:
    """``serving.prompts=eval:NAME`` (or a pattern): the levels the prompts fill, as ids."""
    plan = eval_plan(levels, pools)

    def body(index: int, level: Level, request: int) -> Body:
        return generate_body(level_prompts(plan, level)[request], conf.output_tokens)

    def warmup(bucket: int) -> list[Body]:
        found = warmup_prompts(plan, bucket, conf.warmup)
        return [generate_body(ids, conf.output_tokens) for ids in found]

    return Sweep(plan.levels, plan.notes, body, warmup, True, GENERATE_METHOD,
                 prompts_text(pools, plan), describe(pools, plan))  # fmt: skip


def sweep_of(conf: ServingConf, levels: Sequence[Level], pools: EvalPools | None) -> Sweep:
    """The sweep ``serving.prompts`` asks for: random words (no pools) or the evals' prompts."""
    return word_sweep(conf, levels) if pools is None else eval_sweep(conf, levels, pools)
