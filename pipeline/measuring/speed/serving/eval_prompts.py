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
prompt an earlier one sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.measuring.speed.prompts import PromptPool
from pipeline.measuring.speed.serving.plan import Level
from pipeline.results.nested_schema import PromptsJson

Ids = tuple[int, ...]
RADIX_CACHE = "flushed before every level"


@dataclass(frozen=True)
class EvalPlan:
    """The levels an eval's prompts fill, a note per level or bucket they cannot, the prompts."""

    levels: tuple[Level, ...]
    notes: tuple[str, ...]
    prompts: dict[int, tuple[Ids, ...]]  # per bucket: its distinct cut prompts, in the eval's order


def cut_prompts(prompts: Sequence[Sequence[int]], length: int) -> tuple[Ids, ...]:
    """The distinct first ``length`` ids of every prompt at least that long, in the pool's order."""
    cuts = dict.fromkeys(tuple(p[:length]) for p in prompts if len(p) >= length)
    return tuple(cuts)


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


def bucket_note(pool: PromptPool, bucket: int) -> str:
    """Why ``bucket`` is skipped: no prompt of the pool is that long."""
    longest = max(len(p) for p in pool.prompts)
    return (
        f"bucket {bucket} skipped: serving.prompts={pool.source} has no prompt of {bucket} "
        f"tokens or more (the longest has {longest}); real text is not tiled (a repeated prompt "
        "attends to its own copy)"
    )


def eval_plan(levels: Sequence[Level], pool: PromptPool) -> EvalPlan:
    """The levels of ``levels`` that ``pool`` can send, each bucket's prompts and the notes."""
    kept: list[Level] = []
    notes: list[str] = []
    prompts: dict[int, tuple[Ids, ...]] = {}
    for level in levels:
        if level.bucket not in prompts:
            prompts[level.bucket] = cut_prompts(pool.prompts, level.bucket)
            if not prompts[level.bucket]:
                notes.append(bucket_note(pool, level.bucket))
        if not prompts[level.bucket]:
            continue
        fitted, note = fit_level(level, len(prompts[level.bucket]), pool.source)
        kept += [fitted] if fitted is not None else []
        notes += [note] if note is not None else []
    return EvalPlan(tuple(kept), tuple(notes), {b: p for b, p in prompts.items() if p})


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


def describe(pool: PromptPool) -> PromptsJson:
    """``serving.eval_prompts`` of result.json: where the ids came from, how many, how long."""
    found = pool.describe()
    found["radix_cache"] = RADIX_CACHE
    return found


def prompts_text(pool: PromptPool) -> str:
    """``serving.prompts`` of result.json: what the prompts were, for a reader."""
    return (
        f"{pool.source}: the {pool.eval_name} eval's prompts as its cell sends them (chat "
        f"template, the tokenizer of {pool.tokenizer}), as token ids to /generate, cut to each "
        f"bucket's length, distinct within a level; the radix cache {RADIX_CACHE}"
    )
