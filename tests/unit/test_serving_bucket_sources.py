"""``serving.prompts=eval:PATTERN``: which matched eval each bucket draws from, and what is said."""

from __future__ import annotations

import pytest

from backends.backend_conf import ModelConf
from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.prompt_source import eval_name, matched_evals, source_problems
from pipeline.config.schema import ServingConf, SpeedConf
from pipeline.measuring.speed.prompts import EvalPools, PromptPool, eval_prompt_pools
from pipeline.measuring.speed.serving.bucket_sources import (
    bucket_needs,
    choose,
    reach,
)
from pipeline.measuring.speed.serving.eval_prompts import (
    describe,
    eval_plan,
    level_prompts,
    prompts_text,
)
from pipeline.measuring.speed.serving.plan import Level
from tests.unit.test_config import compose_cell
from tests.unit.test_speed_prompts import TRAINED, _retrieval

PATTERN = "eval:tp_*"
KEY = "serving.prompts"


def _pool(name: str, *lengths: int, first: int = 0) -> PromptPool:
    """Prompts of these lengths, each its own (its first id is ``first`` + its index)."""
    prompts = tuple(tuple([first + i] + [7] * (n - 1)) for i, n in enumerate(lengths))
    return PromptPool(f"eval:{name}", "tok", prompts)


SHORT = _pool("tp_1k", 1100, 1200, 1300, 1400, first=100)
LONG = _pool("tp_4k", 4200, 4300, 4400, 4500, 4600, first=200)
FEW_LONG = _pool("tp_8k", 8300, 8400, first=300)
SAME_OPENING = PromptPool("eval:tp_same", "tok", tuple((1,) * 1024 + (i,) for i in range(6)))


@pytest.mark.parametrize(
    ("pools", "bucket", "needed", "expected"),
    [
        ([SHORT, LONG], 1024, 4, "tp_1k"),  # both have enough: the least cut
        ([LONG, SHORT], 1024, 4, "tp_1k"),  # whatever the cell's order
        ([SHORT, LONG], 4096, 4, "tp_4k"),  # the short split does not reach it
        ([SHORT, LONG], 1024, 5, "tp_4k"),  # only the long one has 5
        ([SHORT, LONG], 1024, 9, "tp_4k"),  # none has 9: the most prompts there (capped)
        ([LONG, FEW_LONG], 8192, 4, "tp_8k"),  # none has enough: the only one that reaches it
        ([SHORT, LONG], 8192, 4, None),  # no eval reaches it
        ([_pool("tp_a", 2000, 2000), _pool("tp_b", 2000, 2000)], 1024, 2, "tp_a"),  # tie: order
        ([SAME_OPENING, LONG], 1024, 2, "tp_4k"),  # equal cuts count once: 1, not 6
    ],
)
def test_each_bucket_draws_from_the_least_cut_eval_with_enough_prompts(
    pools: list[PromptPool], bucket: int, needed: int, expected: str | None
) -> None:
    found = choose([reach(p, bucket) for p in pools], needed)
    assert (found.pool.eval_name if found else None) == expected


@pytest.mark.parametrize(
    ("pool", "bucket", "cuts", "median"),
    [
        (SHORT, 1024, 4, 1250.0),
        (SHORT, 1250, 2, 1350.0),  # only the prompts that reach the bucket count
        (LONG, 4400, 3, 4500.0),
        (SAME_OPENING, 1024, 1, 1025.0),
    ],
)
def test_a_reach_counts_distinct_cuts_and_the_median_of_the_prompts_cut(
    pool: PromptPool, bucket: int, cuts: int, median: float
) -> None:
    found = reach(pool, bucket)
    assert (len(found.cuts), found.median) == (cuts, median)
    assert all(len(c) == bucket for c in found.cuts)


def test_a_bucket_needs_its_largest_levels_requests() -> None:
    levels = [Level(1024, 1, 4), Level(1024, 8, 16), Level(4096, 1, 4), Level(4096, 2, 4)]
    assert bucket_needs(levels) == {1024: 16, 4096: 4}


def test_a_pattern_plan_sends_each_bucket_one_evals_cuts_and_says_which() -> None:
    pools = EvalPools(PATTERN, (LONG, SHORT, FEW_LONG))  # the long split first, on purpose
    planned = [Level(b, c, 4) for b in (1024, 4096, 8192, 16384) for c in (1, 4)]
    plan = eval_plan(planned, pools)
    assert {b: p.eval_name for b, p in plan.sources.items()} == {
        1024: "tp_1k", 4096: "tp_4k", 8192: "tp_8k"}  # fmt: skip
    assert plan.levels == (*planned[:4], Level(8192, 1, 2))
    firsts = {b: {ids[0] for lv in plan.levels if lv.bucket == b for ids in level_prompts(plan, lv)}
              for b in plan.sources}  # fmt: skip
    assert firsts == {1024: {100, 101, 102, 103}, 4096: {200, 201, 202, 203}, 8192: {300, 301}}
    assert plan.notes == (
        "bucket 8192, concurrency 1: 2 requests, not 4: serving.prompts=eval:tp_* (here "
        "eval:tp_8k) has 2 distinct prompts of 8192 tokens (none repeated)",
        "bucket 8192, concurrency 4 skipped: serving.prompts=eval:tp_* (here eval:tp_8k) has 2 "
        "distinct prompts of 8192 tokens, fewer than the level keeps in flight",
        "bucket 16384 skipped: serving.prompts=eval:tp_* matches no eval with a prompt of 16384 "
        "tokens or more (the longest of each: tp_4k 4600, tp_1k 1400, tp_8k 8400); real text is "
        "not tiled (a repeated prompt attends to its own copy)",
    )


def test_the_result_names_each_buckets_eval_and_each_pool() -> None:
    pools = EvalPools(PATTERN, (SHORT, LONG))
    plan = eval_plan([Level(1024, 1, 4), Level(4096, 1, 4), Level(8192, 1, 4)], pools)
    found = describe(pools, plan)
    assert found["source"] == PATTERN and found["distinct"] == 9
    assert (found["shortest"], found["longest"]) == (1100, 4600)
    assert found.get("buckets") == {"1024": "eval:tp_1k", "4096": "eval:tp_4k"}
    assert [p["source"] for p in found.get("pools", [])] == ["eval:tp_1k", "eval:tp_4k"]
    assert {p["radix_cache"] for p in found.get("pools", [])} == {"flushed before every level"}
    text = prompts_text(pools, plan)
    assert text.startswith(f"{PATTERN}: each bucket the matched eval whose prompts are cut least")
    assert "(bucket: 1024: eval:tp_1k, 4096: eval:tp_4k)" in text
    one = EvalPools("eval:tp_1k", (SHORT,))  # an exact name: as before this change
    assert prompts_text(one, eval_plan([Level(1024, 1, 4)], one)).startswith(
        "eval:tp_1k: the tp_1k eval's prompts as its cell sends them"
    )
    assert set(describe(one, eval_plan([Level(1024, 1, 4)], one))) == set(SHORT.describe())


@pytest.mark.parametrize(
    ("name", "evals", "expected"),
    [
        ("tp_*", ["tp_1k", "mcq", "tp_4k"], ["tp_1k", "tp_4k"]),  # the cell's order
        ("tp_1k", ["tp_1k", "tp_1k_b"], ["tp_1k"]),  # an exact name matches itself only
        ("tp_*", ["mcq"], []),
        ("tp_1k", ["mcq"], []),
    ],
)
def test_a_pattern_matches_the_cells_evals_in_order(
    name: str, evals: list[str], expected: list[str]
) -> None:
    assert matched_evals(name, evals) == expected


@pytest.mark.parametrize("key", ["speed.prompts", "parity.prompts"])
def test_only_serving_prompts_takes_a_pattern(key: str) -> None:
    with pytest.raises(ValueError, match=rf"{key}='eval:tp_\*': patterns .* serving\.prompts only"):
        eval_name("eval:tp_*", key)
    found = source_problems(SpeedConf(prompts="eval:tp_*"), ["tp_1k"], key)
    assert len(found) == 1 and "are for serving.prompts only" in found[0]
    assert eval_name("eval:tp_*", "serving.prompts") == "tp_*"


@pytest.mark.parametrize(
    ("overrides", "refused"),
    [
        (["serving.prompts=eval:speed_bench_throughput_*", "evals=[speed_bench]"], None),
        (["serving.prompts=eval:longctx_*", "evals=[mcq_sample]"],
         r"serving\.prompts=eval:longctx_\* matches none of the evals the cell runs "
         r"\(evals=\[mcq_sample\]\): add an eval it matches"),
        (["speed.enabled=true", "speed.prompts=eval:mcq_*", "evals=[mcq_sample]"],
         r"speed\.prompts='eval:mcq_\*': patterns .* for serving\.prompts only"),
        (["parity.enabled=true", "parity.prompts=eval:mcq_*", "evals=[mcq_sample]"],
         r"parity\.prompts='eval:mcq_\*': patterns .* for serving\.prompts only"),
    ],
)  # fmt: skip
def test_the_compose_time_check_reads_patterns_as_the_cell_does(
    overrides: list[str], refused: str | None
) -> None:
    conf = compose_cell(["serving.enabled=true", *overrides])
    if refused is None:
        assert to_cell_config(conf).serving.prompts == "eval:speed_bench_throughput_*"
        return
    with pytest.raises(ConfigError, match=refused):
        to_cell_config(conf)


def test_a_pattern_tokenizes_one_pool_per_matched_eval_in_the_cells_order() -> None:
    evals = {"r_b": _retrieval(), "mcq": _retrieval(), "r_a": _retrieval()}
    model = ModelConf(path="tiny-sim", tokenizer_path=str(TRAINED))
    found = eval_prompt_pools(ServingConf(enabled=True, prompts="eval:r_*"), evals, model, KEY)
    assert found is not None and found.pattern and found.setting == "eval:r_*"
    assert [p.source for p in found.pools] == ["eval:r_b", "eval:r_a"]
    assert found.pools[0].prompts == found.pools[1].prompts and found.pools[0].prompts
    one = eval_prompt_pools(ServingConf(enabled=True, prompts="eval:mcq"), evals, model, KEY)
    assert one is not None and not one.pattern and [p.source for p in one.pools] == ["eval:mcq"]
