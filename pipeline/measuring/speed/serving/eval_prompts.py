"""An eval's prompts for the serving phase (pure): ``serving.prompts=eval:NAME``, per bucket.

Each request of a bucket is a distinct prompt of the eval (``speed.prompts.PromptPool``: as its
cell sends it, chat template applied by the model's tokenizer, as token ids) cut to the bucket's
length. A prompt shorter than the bucket is not used for it and none is tiled (a prompt repeated
after itself attends to its own copy, not as a real prompt of that length does); two prompts that
agree on the bucket's first tokens count once, since the second would be a radix-cache hit of
the first. So a bucket longer than every prompt is skipped, and a level asking for more requests
than the bucket has prompts sends each once (capped) or, below its concurrency, is skipped: it
could not keep that many in flight, and its figures would be of another level. Each note says
which and why. The radix cache is flushed before every level (``run``), so no level meets a
prompt an earlier one sent. With ``eval:PATTERN`` each bucket draws from one of the matched
evals (``bucket_sources``), and result.json says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.measuring.speed.prompts import EvalPools, PromptPool
from pipeline.measuring.speed.serving.bucket_sources import (
    bucket_sources,
    source_of,
    unreached_note,
)
from pipeline.measuring.speed.serving.plan import Level
from pipeline.results.nested_schema import PromptsJson, ServingPromptsJson

Ids = tuple[int, ...]
RADIX_CACHE = "flushed before every level"


@dataclass(frozen=True)
class EvalPlan:
    """The levels an eval's prompts fill, a note per level or bucket they cannot, the prompts."""

    levels: tuple[Level, ...]
    notes: tuple[str, ...]
    prompts: dict[int, tuple[Ids, ...]]  # per bucket: its distinct cut prompts, in the eval's order
    sources: dict[int, PromptPool] = field(default_factory=dict)  # per bucket: the eval drawn


def fit_level(level: Level, available: int, source: str) -> tuple[Level | None, str | None]:
    """``level`` as ``available`` distinct prompts can send it, and a note when they change it.

    Returns:
        The level (its requests capped at ``available``), or None when fewer prompts than its
        concurrency are left; the note says which, None when the level is sent as planned.
    """
    if available >= level.requests:
        return level, None
    where = f"bucket {level.bucket}, concurrency {level.concurrency}"
    has = f"serving.prompts={source} has {available} distinct prompts of {level.bucket} tokens"
    if available < level.concurrency:
        return None, f"{where} skipped: {has}, fewer than the level keeps in flight"
    capped = Level(level.bucket, level.concurrency, available)
    return capped, f"{where}: {available} requests, not {level.requests}: {has} (none repeated)"


def eval_plan(levels: Sequence[Level], pools: EvalPools) -> EvalPlan:
    """The levels of ``levels`` that ``pools`` can send, each bucket's prompts and the notes.

    Each bucket draws from one eval (``bucket_sources``: with one pool, that pool).
    """
    kept: list[Level] = []
    notes: list[str] = []
    chosen = bucket_sources(levels, pools)
    for bucket, found in chosen.items():
        if found is None:
            notes.append(unreached_note(pools, bucket))
            continue
        for level in (lv for lv in levels if lv.bucket == bucket):
            fitted, note = fit_level(level, len(found.cuts), source_of(pools, found.pool))
            kept += [fitted] if fitted is not None else []
            notes += [note] if note is not None else []
    drawn = {b: r for b, r in chosen.items() if r is not None}
    return EvalPlan(tuple(kept), tuple(notes), {b: r.cuts for b, r in drawn.items()},
                    {b: r.pool for b, r in drawn.items()})  # fmt: skip


def level_prompts(plan: EvalPlan, level: Level) -> tuple[Ids, ...]:
    """The prompts of ``level``: its bucket's first ``level.requests``, each once."""
    return plan.prompts[level.bucket][: level.requests]


def warmup_prompts(plan: EvalPlan, bucket: int, count: int) -> list[Ids]:
    """``count`` warm-up prompts of ``bucket`` (the cache is flushed after them)."""
    found = plan.prompts[bucket]
    return [found[i % len(found)] for i in range(count)]


def generate_body(ids: Sequence[int], output_tokens: int) -> dict[str, object]:
    """A streaming native ``/generate`` request that decodes exactly ``output_tokens``.

    The chat endpoint takes text only; ``input_ids`` sends the cut prompt as it is. Sampling as
    the chat body's (``plan.chat_body``): greedy, EOS ignored.
    """
    return {
        "input_ids": list(ids),
        "sampling_params": {
            "max_new_tokens": output_tokens,
            "ignore_eos": True,
            "temperature": 0.0,
        },
        "stream": True,
    }


def describe(pools: EvalPools, plan: EvalPlan) -> ServingPromptsJson:
    """``serving.eval_prompts`` of result.json: where the ids came from, how many, how long.

    For a pattern, also each bucket's eval and each matched eval's own description.
    """
    if not pools.pattern:
        return _as_serving(_of_serving(pools.pools[0]))
    every = tuple(ids for pool in pools.pools for ids in pool.prompts)
    whole = _of_serving(PromptPool(pools.setting, pools.pools[0].tokenizer, every))
    return ServingPromptsJson(
        **whole,
        buckets={str(b): pool.source for b, pool in plan.sources.items()},
        pools=[_of_serving(pool) for pool in pools.pools],
    )


def _as_serving(found: PromptsJson) -> ServingPromptsJson:
    """One eval's description as ``serving.eval_prompts`` (no pattern: no bucket keys)."""
    return {
        "source": found["source"], "tokenizer": found["tokenizer"], "distinct": found["distinct"],
        "shortest": found["shortest"], "longest": found["longest"],
        "shared_prefix_tokens": found["shared_prefix_tokens"], "radix_cache": found["radix_cache"],
    }  # fmt: skip


def _of_serving(pool: PromptPool) -> PromptsJson:
    """A pool's description, its radix cache as the serving phase treats it."""
    return {**pool.describe(), "radix_cache": RADIX_CACHE}


def prompts_text(pools: EvalPools, plan: EvalPlan) -> str:
    """``serving.prompts`` of result.json: what the prompts were, for a reader.

    The report pairs serving cells only when this text is the same, so for a pattern it names
    each bucket's eval: two cells whose buckets drew from other evals served other workloads.
    """
    tokenizer = pools.pools[0].tokenizer
    how = (
        f"as token ids to /generate, cut to each bucket's length, distinct within a level; the "
        f"radix cache {RADIX_CACHE}"
    )
    if not pools.pattern:
        name = pools.pools[0].eval_name
        return (
            f"{pools.setting}: the {name} eval's prompts as its cell sends them (chat "
            f"template, the tokenizer of {tokenizer}), {how}"
        )
    drawn = ", ".join(f"{b}: {pool.source}" for b, pool in plan.sources.items()) or "none"
    return (
        f"{pools.setting}: each bucket the matched eval whose prompts are cut least (bucket: "
        f"{drawn}), its prompts as its cell sends them (chat template, the tokenizer of "
        f"{tokenizer}), {how}"
    )
