"""``serving.prompts=eval:NAME``'s pure parts: cuts per bucket, caps, notes, /generate streams."""

from __future__ import annotations

import pytest

from evals.eval_conf import EvalConf
from evals.responses import ResponseFormatError, StreamError
from pipeline.config.schema import RootConf, ServingConf
from pipeline.config.serving_checks import serving_problems
from pipeline.measuring.speed.prompts import EvalPools, PromptPool
from pipeline.measuring.speed.serving.bucket_sources import cut_prompts
from pipeline.measuring.speed.serving.eval_prompts import (
    eval_plan,
    fit_level,
    generate_body,
    level_prompts,
    warmup_prompts,
)
from pipeline.measuring.speed.serving.generate_stream import generate_stream_result
from pipeline.measuring.speed.serving.plan import Level
from pipeline.measuring.speed.serving.sources import sweep_of

SOURCE = "eval:e"


def _pool(*lengths: int) -> PromptPool:
    """Prompts of these lengths, each its own (its first id is its index)."""
    prompts = tuple(tuple([i] + [100 + j for j in range(n - 1)]) for i, n in enumerate(lengths))
    return PromptPool(SOURCE, "tok", prompts)


@pytest.mark.parametrize(
    ("prompts", "length", "expected"),
    [
        ([(1, 2, 3), (4, 5, 6, 7)], 2, [(1, 2), (4, 5)]),  # each cut to the length
        ([(1, 2), (4, 5, 6, 7)], 3, [(4, 5, 6)]),  # a shorter prompt is not used
        ([(1, 2, 3), (1, 2, 4), (5, 6, 7)], 2, [(1, 2), (5, 6)]),  # equal cuts count once
        ([(1, 2, 3)], 3, [(1, 2, 3)]),  # exactly the length
        ([(1, 2)], 5, []),  # never tiled
    ],
)
def test_a_bucket_s_prompts_are_distinct_cuts_of_the_long_enough(
    prompts: list[tuple[int, ...]], length: int, expected: list[tuple[int, ...]]
) -> None:
    assert list(cut_prompts(prompts, length)) == expected


@pytest.mark.parametrize(
    ("level", "available", "expected", "said"),
    [
        (Level(1024, 4, 8), 8, Level(1024, 4, 8), None),  # enough: as planned
        (Level(1024, 4, 8), 20, Level(1024, 4, 8), None),
        (Level(1024, 4, 8), 6, Level(1024, 4, 6), "6 requests, not 8"),  # capped, none repeated
        (Level(1024, 4, 8), 4, Level(1024, 4, 4), "4 requests, not 8"),
        (Level(1024, 4, 8), 3, None, "concurrency 4 skipped"),  # cannot keep 4 in flight
    ],
)
def test_a_level_is_capped_at_its_prompts_or_skipped_below_its_concurrency(
    level: Level, available: int, expected: Level | None, said: str | None
) -> None:
    fitted, note = fit_level(level, available, SOURCE)
    assert fitted == expected
    assert (note is None) if said is None else (note is not None and said in note), note
    assert note is None or f"serving.prompts={SOURCE} has {available} distinct prompts" in note


def test_the_plan_keeps_what_the_pool_fills_and_notes_the_rest() -> None:
    pool = _pool(3000, 3000, 3000, 5000)
    planned = [Level(b, c, max(2, 2 * c)) for b in (1024, 4096, 8192) for c in (1, 2)]
    plan = eval_plan(planned, EvalPools(SOURCE, (pool,)))
    assert plan.levels == (Level(1024, 1, 2), Level(1024, 2, 4), Level(4096, 1, 1))
    assert [n.split(":")[0] for n in plan.notes] == [
        "bucket 4096, concurrency 1", "bucket 4096, concurrency 2 skipped", "bucket 8192 skipped",
    ]  # fmt: skip
    assert "the longest has 5000" in plan.notes[-1] and "not tiled" in plan.notes[-1]
    assert set(plan.prompts) == {1024, 4096}
    level = plan.levels[1]
    sent = level_prompts(plan, level)
    assert len(set(sent)) == 4 and {ids[0] for ids in sent} == {0, 1, 2, 3}
    assert all(len(ids) == 1024 for ids in sent)
    assert [ids[0] for ids in warmup_prompts(plan, 4096, 3)] == [3, 3, 3]  # flushed after


def test_a_sweep_of_eval_prompts_streams_ids_to_generate() -> None:
    conf = ServingConf(output_tokens=8)
    pool = _pool(2000, 2000)
    sweep = sweep_of(conf, [Level(1024, 1, 2)], EvalPools(SOURCE, (pool,)))
    assert sweep.native and sweep.eval_prompts is not None
    assert sweep.eval_prompts["radix_cache"] == "flushed before every level"
    assert "buckets" not in sweep.eval_prompts and "pools" not in sweep.eval_prompts  # one eval
    assert sweep.body(0, sweep.levels[0], 1) == generate_body(pool.prompts[1][:1024], 8)
    body = generate_body((5, 6), 8)
    assert body == {"input_ids": [5, 6], "stream": True, "sampling_params": {
        "max_new_tokens": 8, "ignore_eos": True, "temperature": 0.0}}  # fmt: skip
    words = sweep_of(conf, [Level(1024, 1, 2)], None)
    assert not words.native and words.eval_prompts is None and words.levels == (Level(1024, 1, 2),)


def _event(tokens: int, finish: object = None, **spec: object) -> dict[str, object]:
    meta = {"id": "r", "finish_reason": finish, "prompt_tokens": 1024, "completion_tokens": tokens}
    return {"text": "x" * tokens, "output_ids": list(range(tokens)), "meta_info": {**meta, **spec}}


SPEC = {"spec_accept_rate": 0.5, "spec_accept_length": 2.0, "spec_num_correct_drafts": 4,
        "spec_num_proposed_drafts": 12, "spec_verify_ct": 4}  # fmt: skip
LENGTH = {"type": "length", "length": 8}


@pytest.mark.parametrize(
    ("events", "arrivals", "verify_ct", "finish"),
    [
        ([_event(4), _event(8, LENGTH, **SPEC)], (0.0, 1.0), 4, "length"),
        ([_event(4), _event(4), _event(8, LENGTH)], (0.0, 2.0), None, "length"),  # no new tokens
        ([_event(4), _event(8, LENGTH), _event(8, LENGTH)], (0.0, 1.0), None, "length"),
        ([_event(8)], (0.0,), None, None),  # no finished event: the client calls it unfinished
        ([_event(3, {"type": "abort", "message": "m", "status_code": 503})], (0.0,), None, "abort"),
    ],
)
def test_a_generate_stream_reads_as_the_chat_stream(
    events: list[dict[str, object]],
    arrivals: tuple[float, ...],
    verify_ct: int | None,
    finish: str | None,
) -> None:
    got = generate_stream_result(events, [float(i) for i in range(len(events))])
    assert got.arrivals == arrivals and got.finish_reason == finish
    assert got.prompt_tokens == 1024
    last = events[-1]["meta_info"]
    assert isinstance(last, dict) and got.completion_tokens == last["completion_tokens"]
    assert (got.spec.verify_ct if got.spec else None) == verify_ct
    assert (got.finish_status == 503) is (finish == "abort")


@pytest.mark.parametrize(
    ("events", "error"),
    [
        ([_event(4), {"error": {"message": "The input is too long"}}], StreamError),
        ([{"text": "x"}], ResponseFormatError),
        (["not an object"], ResponseFormatError),
        ([], ResponseFormatError),
    ],
)
def test_a_broken_generate_stream_raises_what_the_client_classifies(
    events: list[object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        generate_stream_result(events, [0.0] * len(events))


@pytest.mark.parametrize(
    ("prompts", "evals", "said"),
    [
        ("random", [], None),
        ("eval:longctx_niah_single", ["longctx_niah_single"], None),
        ("eval:nope", ["mcq_sample"], "serving.prompts=eval:nope names an eval the cell does not"),
        ("words", [], "serving.prompts='words': use random (random common words) or eval:NAME"),
        ("eval:", [], "serving.prompts='eval:': use random"),
        ("eval:speed_bench_throughput_*", ["mcq_sample", "speed_bench_throughput_1k"], None),
        ("eval:longctx_*", ["mcq_sample"], "serving.prompts=eval:longctx_* matches none of the"),
    ],
)
def test_serving_prompts_must_be_random_or_one_of_the_cells_evals(
    prompts: str, evals: list[str], said: str | None
) -> None:
    conf = RootConf(serving=ServingConf(enabled=True, prompts=prompts))
    conf.evals = {name: EvalConf() for name in evals}
    found = serving_problems(conf)
    assert found == [] if said is None else any(said in p for p in found), found
