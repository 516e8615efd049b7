"""Which matched eval each bucket of the serving sweep draws from (pure): ``eval:PATTERN``.

``serving.prompts=eval:speed_bench_throughput_*`` matches one eval per input-length split, and a
capacity planner wants the 1k bucket to send the 1k split's prompts, the 8k bucket the 8k split's.
Each bucket draws from ONE eval, so a level's requests are one workload (a level mixing two
evals would time neither). Among the evals with enough distinct prompts at least as long as the
bucket for its largest level, the one whose prompts are cut least: the smallest median length of
its prompts that reach the bucket (the 1k split for the 1k bucket, not the 32k split cut to a
32nd of each prompt, whose attention would be of a prompt's opening only). When none has enough,
the eval with the most prompts there: its levels are capped or skipped with notes, as one eval's
are. A bucket no eval reaches is skipped with a note. Ties go to the cell's order of its evals.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.measuring.speed.prompts import EvalPools, PromptPool
from pipeline.measuring.speed.serving.plan import Level

Ids = tuple[int, ...]
NOT_TILED = "real text is not tiled (a repeated prompt attends to its own copy)"


@dataclass(frozen=True)
class Reach:
    """What one eval's pool offers a bucket: its distinct cuts, and how much they were cut."""

    pool: PromptPool
    cuts: tuple[Ids, ...]  # the distinct first ``bucket`` ids of its prompts that long
    median: float  # the median length of its prompts that reach the bucket (inf: none does)


def cut_prompts(prompts: Sequence[Sequence[int]], length: int) -> tuple[Ids, ...]:
    """The distinct first ``length`` ids of every prompt at least that long, in the pool's order."""
    cuts = dict.fromkeys(tuple(p[:length]) for p in prompts if len(p) >= length)
    return tuple(cuts)


def reach(pool: PromptPool, bucket: int) -> Reach:
    """What ``pool`` offers ``bucket``: its cuts and the median length of the prompts cut."""
    lengths = [len(p) for p in pool.prompts if len(p) >= bucket]
    median = float(statistics.median(lengths)) if lengths else math.inf
    return Reach(pool, cut_prompts(pool.prompts, bucket), median)


def choose(reaches: Sequence[Reach], needed: int) -> Reach | None:
    """The eval a bucket draws from, given its largest level's ``needed`` requests.

    Returns:
        Among the reaches with ``needed`` cuts or more, the least cut (smallest median); else
        the one with the most cuts; None when no eval has a prompt that long. ``min`` and ``max``
        keep the first of equals, so ties go to the cell's order.
    """
    enough = [r for r in reaches if len(r.cuts) >= needed]
    if enough:
        return min(enough, key=lambda r: r.median)
    most = max(reaches, key=lambda r: len(r.cuts), default=None)
    return most if most is not None and most.cuts else None


def bucket_needs(levels: Sequence[Level]) -> dict[int, int]:
    """Each bucket's largest level's requests, the buckets in the sweep's order."""
    needs: dict[int, int] = {}
    for level in levels:
        needs[level.bucket] = max(needs.get(level.bucket, 0), level.requests)
    return needs


def bucket_sources(levels: Sequence[Level], pools: EvalPools) -> dict[int, Reach | None]:
    """Per bucket of ``levels``, in order: the eval it draws from (None: no eval reaches it)."""
    return {
        bucket: choose([reach(pool, bucket) for pool in pools.pools], needed)
        for bucket, needed in bucket_needs(levels).items()
    }


def source_of(pools: EvalPools, chosen: PromptPool) -> str:
    """How a note names a bucket's prompts: ``eval:NAME``, or the pattern and the eval chosen."""
    return f"{pools.setting} (here {chosen.source})" if pools.pattern else chosen.source


def unreached_note(pools: EvalPools, bucket: int) -> str:
    """Why ``bucket`` is skipped: no prompt of any matched eval is that long."""
    if not pools.pattern:
        (pool,) = pools.pools
        longest = max(len(p) for p in pool.prompts)
        return (
            f"bucket {bucket} skipped: serving.prompts={pool.source} has no prompt of {bucket} "
            f"tokens or more (the longest has {longest}); {NOT_TILED}"
        )
    each = ", ".join(f"{p.eval_name} {max(len(x) for x in p.prompts)}" for p in pools.pools)
    return (
        f"bucket {bucket} skipped: serving.prompts={pools.setting} matches no eval with a prompt "
        f"of {bucket} tokens or more (the longest of each: {each}); {NOT_TILED}"
    )
