from __future__ import annotations

import dataclasses

import pytest

from evals.eval_conf import SamplingConf
from pipeline.cell.cell_plan import measure_plan
from pipeline.measuring.measure import (
    REASONING_MIN_MAX_TOKENS,
    generation_limit_warnings,
    sampling_for,
)
from tests.helpers.cells import compose_conf


def test_sampling_comes_from_the_model_unless_the_eval_sets_its_own() -> None:
    conf = compose_conf(["evals=[gsm8k_sample,mcq_sample]", "model.sampling.temperature=0.6"])
    own = SamplingConf(temperature=0.0, max_tokens=50)
    conf.evals["mcq_sample"] = dataclasses.replace(conf.evals["mcq_sample"], sampling=own)
    assert sampling_for(measure_plan(conf), "gsm8k_sample") == (conf.model.sampling, "model")
    assert sampling_for(measure_plan(conf), "mcq_sample") == (own, "eval")
    assert conf.model.sampling.temperature == 0.6


@pytest.mark.parametrize(
    ("overrides", "warned"),
    [
        ([], []),  # not a reasoning model
        (["model.reasoning_parser=deepseek-r1"], ["gsm8k_sample", "mcq_sample"]),
        (["+model.chat_template_kwargs.enable_thinking=true"], ["gsm8k_sample", "mcq_sample"]),
        (["+model.chat_template_kwargs.thinking=true"], ["gsm8k_sample", "mcq_sample"]),
        (["+model.chat_template_kwargs.enable_thinking=false"], []),
        (
            [
                "model.reasoning_parser=qwen3",
                f"model.sampling.max_tokens={REASONING_MIN_MAX_TOKENS}",
            ],
            [],
        ),
    ],
)
def test_generation_limit_warnings(overrides: list[str], warned: list[str]) -> None:
    conf = compose_conf(["evals=[gsm8k_sample,mcq_sample]", *overrides])
    warnings = generation_limit_warnings(measure_plan(conf))
    assert [w.split(":")[0].removeprefix("eval ") for w in warnings] == warned
    assert all("truncated_rate" in w for w in warnings)


def test_an_eval_with_a_large_own_limit_is_not_warned() -> None:
    conf = compose_conf(["evals=[gsm8k_sample,mcq_sample]", "model.reasoning_parser=qwen3"])
    big = SamplingConf(max_tokens=32768)
    conf.evals["mcq_sample"] = dataclasses.replace(conf.evals["mcq_sample"], sampling=big)
    assert [w.split(":")[0] for w in generation_limit_warnings(measure_plan(conf))] == [
        "eval gsm8k_sample"
    ]
