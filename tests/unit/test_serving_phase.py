"""The serving phase's pure parts: its levels, prompts, figures, counters and config rules."""

from __future__ import annotations

import pytest

from evals.eval_conf import EvalConf
from pipeline.config.schema import RootConf, ServingConf
from pipeline.config.serving_checks import evals_run, serving_problems, without_speculation
from pipeline.measuring.speed.serving.plan import Level, levels, prompt_text
from pipeline.measuring.speed.serving.stats import Sample, counters, deltas, point
from pipeline.simserver.timing import step_s, timing_model


def test_levels_skip_a_bucket_the_context_cannot_hold_and_fill_each_batch() -> None:
    conf = ServingConf(concurrency=[1, 64], buckets=[1024, 32768], requests=16)
    found, notes = levels(conf, 32768)
    assert found == [Level(1024, 1, 16), Level(1024, 64, 128)]
    assert len(notes) == 1 and "bucket 32768 skipped" in notes[0]
    assert levels(conf, None)[0][-1] == Level(32768, 64, 128)


def test_prompts_are_their_own_and_as_long_as_their_bucket() -> None:
    a, b = prompt_text(0, 1, 512), prompt_text(0, 2, 512)
    assert a != b and a.startswith("Request 1: ") and len(a.split()) == 2 + 508
    assert prompt_text(0, 1, 512) == a  # every variant sends the same prompts


def _sample(sent: float, first: float, gap: float, chunks: int, verify: int | None) -> Sample:
    arrivals = tuple(first + gap * i for i in range(chunks))
    return Sample(sent, arrivals, arrivals[-1] + 0.001, 4 * chunks, 100, verify)


def test_a_level_s_figures_from_its_requests() -> None:
    samples = [_sample(0.0, 0.1, 0.02, 11, 20), _sample(0.0, 0.3, 0.02, 11, 20)]
    got = point(Level(512, 2, 2), samples, 1, 2, {"sglang:generation_tokens_total": 88.0})
    assert got["requests"] == 2 and got["errors"] == 1 and got["output_tokens"] == 88
    assert got["duration_s"] == pytest.approx(0.501)
    assert got["output_tokens_per_s"] == pytest.approx(88 / 0.501)
    assert got["output_tokens_per_s_per_gpu"] == pytest.approx(44 / 0.501)
    assert got["ttft_ms"]["p50"] == pytest.approx(200.0)
    assert got["itl_ms"]["p99"] == pytest.approx(20.0)
    assert got["tokens_per_s_per_user"] == pytest.approx(43 / 0.2)  # 43 tokens after the first
    assert got["accept_length"] == pytest.approx(88 / 40)
    off = point(Level(512, 2, 2), [_sample(0.0, 0.1, 0.02, 3, None)], 0, 1, {})
    assert off["accept_length"] is None


def test_counters_sum_label_sets_and_deltas_keep_both_ends() -> None:
    text = (
        "# TYPE sglang:generation_tokens_total counter\n"
        'sglang:generation_tokens_total{model_name="m",dp="0"} 10\n'
        'sglang:generation_tokens_total{model_name="m",dp="1"} 5\n'
        "sglang:num_running_reqs 3\n"
    )
    assert counters(text) == {"sglang:generation_tokens_total": 15.0}
    assert counters(None) == {}
    assert deltas({"a": 1.0}, {"a": 4.0, "b": 2.0}) == {"a": 3.0}


def test_speculation_off_is_declared_for_a_serving_only_cell() -> None:
    conf = RootConf(serving=ServingConf(enabled=True, speculation=False))
    conf.model.speculative.algorithm = "EAGLE3"
    assert serving_problems(conf) == []
    assert without_speculation(conf).model.speculative.algorithm is None
    assert without_speculation(RootConf()) == RootConf()  # speculation on: as it is
    conf.evals = {"mcq_sample": EvalConf()}  # an accuracy cell keeps its speculation
    assert "evals=[]" in serving_problems(conf)[0]


@pytest.mark.parametrize(
    ("prompts", "parity", "refused", "evals_run_too"),
    [("random", False, True, False),  # evals listed for nothing: they would run unspeculated
     ("eval:mcq_sample", False, False, False),  # the prompts' source only, never run
     ("eval:mcq_sample", True, True, False)],  # parity needs the model's speculation
)  # fmt: skip
def test_speculation_off_keeps_evals_only_as_the_prompts_source(
    prompts: str, parity: bool, refused: bool, evals_run_too: bool
) -> None:
    conf = RootConf(serving=ServingConf(enabled=True, speculation=False, prompts=prompts))
    conf.evals = {"mcq_sample": EvalConf()}
    conf.parity.enabled = parity
    assert bool(serving_problems(conf)) is refused
    assert evals_run(conf.serving) is evals_run_too
    assert evals_run(ServingConf(enabled=True, prompts=prompts))  # speculation on: they run


def test_bad_serving_values_are_named() -> None:
    bad = ServingConf(enabled=True, concurrency=[0], requests=0, max_seconds=0, prompts="x")
    conf = RootConf(serving=bad)
    found = " ".join(serving_problems(conf))
    for key in ("concurrency", "requests", "max_seconds", "prompts"):
        assert f"serving.{key}=" in found


def test_speculation_pays_alone_and_stops_paying_at_concurrency_64() -> None:
    args = {"attention_backend": "fa3"}
    off = timing_model("h200_8b_shape", args, 0.0)
    on = timing_model("h200_8b_shape", {**args, "speculative_algorithm": "EAGLE",
                                         "speculative_num_draft_tokens": 4}, 0.0)  # fmt: skip
    assert off is not None and on is not None and on.draft_tokens == 4 and not off.draft_tokens
    accept = 2.6  # tokens per verify step
    speedup = {n: step_s(off, n) * accept / step_s(on, n) for n in (1, 16, 64)}
    assert speedup[1] > 1.4 and speedup[16] > 1.0 > speedup[64]


def test_a_point_reads_back_typed_and_names_its_mlflow_metrics() -> None:
    from pipeline.report.write.mlflow_runs import serving_metrics
    from pipeline.results.serving_block import ServingBlock

    level = point(Level(1024, 16, 32), [_sample(0.0, 0.1, 0.02, 11, 20)], 0, 1, {"x_total": 2.0})
    block = ServingBlock.from_json({"speculation": False, "gpus": 1, "points": [level]})
    assert block is not None and not block.speculation
    (got,) = block.points
    assert got.key == (1024, 16) and got.metrics == {"x_total": 2.0}
    assert got.ttft_ms["p50"] == pytest.approx(100.0)
    metrics = serving_metrics(got)
    assert metrics["serving/c16_x1024/ttft_p50_ms"] == pytest.approx(100.0)
    assert ServingBlock.from_json(None) is None
    bad = ServingBlock.from_json({"points": [{"bucket": "x", "output_tokens_per_s": "NaN"}]})
    assert bad is not None and bad.points[0].output_tokens_per_s is None and bad.speculation
