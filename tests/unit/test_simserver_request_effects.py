"""Request-level simulated effects (issue 40): a length threshold and a text marker per prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.simserver.effects import applies_to, cell_targets, request_targets
from pipeline.simserver.simconfig import Effect, SimConfigError, load_sim_config

RESOLVED = {"kv_cache_dtype": "auto", "speculative_algorithm": "EAGLE", "speculative_num_steps": 3}
LONG = Effect({"kv_cache_dtype": "auto"}, accuracy_delta=-0.4, accept_length_delta=-1.0,
              above_prompt_tokens=4096)  # fmt: skip
CODE = Effect({}, accept_length_delta=0.5, prompt_contains="def ")


def test_a_length_effect_applies_only_past_its_threshold() -> None:
    cell = cell_targets(0.7, 2.6, [LONG], RESOLVED, {})
    assert (cell.accuracy, cell.accept_length, cell.matched) == (0.7, 2.6, ())
    assert request_targets(cell, "short", 4096) == (0.7, 2.6)
    assert request_targets(cell, "long", 4097) == pytest.approx((0.3, 1.6))


def test_a_text_effect_applies_to_the_prompts_that_contain_it_and_clips() -> None:
    cell = cell_targets(0.7, 3.8, [CODE, LONG], RESOLVED, {})
    assert applies_to(CODE, "please def f(): pass", 10) and not applies_to(CODE, "prose", 10)
    assert request_targets(cell, "def f(): pass", 10) == (0.7, 4.0)  # num_steps + 1 at most
    assert request_targets(cell, "def f(): pass", 5000) == pytest.approx((0.3, 3.3))


def test_a_request_effect_of_another_cell_never_applies() -> None:
    cell = cell_targets(0.7, 2.6, [LONG], {**RESOLVED, "kv_cache_dtype": "fp8_e4m3"}, {})
    assert cell.per_request == () and request_targets(cell, "x", 10**6) == (0.7, 2.6)


def test_the_config_takes_a_request_effect_without_match_but_not_an_empty_effect(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sim.json"
    path.write_text(json.dumps({"effects": [{"above_prompt_tokens": 8192, "accuracy_delta": -1}]}))
    assert load_sim_config(path).effects[0].per_request
    path.write_text(json.dumps({"effects": [{"accuracy_delta": -1}]}))
    with pytest.raises(SimConfigError, match=r"effects\[0\]\.match is empty"):
        load_sim_config(path)
    path.write_text(json.dumps({"effects": [{"above_prompt_tokens": -1}]}))
    with pytest.raises(SimConfigError, match="above_prompt_tokens"):
        load_sim_config(path)
