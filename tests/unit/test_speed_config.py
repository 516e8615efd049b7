"""The ``speed`` node: composed from conf/config.yaml, refused with the key when senseless."""

from __future__ import annotations

import pytest

from pipeline.cell.cell_result import measured_config
from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.schema import SpeedConf
from pipeline.serving.server_kind import ServerPlan
from tests.unit.test_config import compose_cell


def test_the_yaml_block_says_what_the_schema_says() -> None:
    assert to_cell_config(compose_cell([])).speed == SpeedConf()  # off, the shapes


def test_speed_alone_is_evals_empty_with_speed_on() -> None:
    conf = to_cell_config(compose_cell(["evals=[]", "speed.enabled=true"]))
    assert conf.evals == {} and conf.speed.enabled
    with pytest.raises(ConfigError, match=r"evals=\[\] selects no eval"):
        to_cell_config(compose_cell(["evals=[]"]))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["speed.repeats=0"], "speed.repeats=0 is out of range: use an integer >= 1"),
        (["speed.warmup=-1"], "speed.warmup=-1 is out of range"),
        (["speed.prefill_tokens=[1024,0]"], "speed.prefill_tokens=[1024, 0]: every entry"),
        (["speed.decode_batches=[-8]"], "speed.decode_batches=[-8]: every entry"),
        (["speed.vocab_size=500"], "leaves no token ids above speed.first_token_id=1000"),
        (["speed.request_timeout_s=0"], "speed.request_timeout_s=0.0 is out of range"),
        (["speed.enabled=true", "server.enable_metrics=false"], "needs server.enable_metrics"),
    ],
)
def test_a_speed_value_that_makes_no_sense_is_refused(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        to_cell_config(compose_cell(overrides))


def test_speed_is_part_of_what_a_cell_measures_only_when_on() -> None:
    off = to_cell_config(compose_cell([]))
    on = to_cell_config(compose_cell(["speed.enabled=true"]))
    kind = ServerPlan.of(off.server).kind
    assert "speed" not in measured_config(off, kind)  # cells from before it keep their hash
    assert measured_config(on, kind)["speed"]["repeats"] == 5
    timed = to_cell_config(compose_cell(["server.simulated.timing_model=h200_8b_shape"]))
    assert measured_config(timed, kind)["simulated"]["timing_model"] == "h200_8b_shape"
    assert "timing_model" not in measured_config(off, kind)["simulated"]


def test_a_preset_sets_the_primary_configs_own_keys() -> None:
    # conf/config.yaml lists experiment after _self_: its speed block would otherwise overwrite
    # the preset's without a word (speed_llama3_1_8b ran no speed phase).
    conf = to_cell_config(compose_cell(["experiment=speed_llama3_1_8b"]))
    assert conf.speed.enabled and conf.speed.repeats == 3
    assert conf.model.context_length == 131200 and conf.model.extra_args == ["--dtype", "bfloat16"]
    assert conf.server.env["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] == "1"
    assert conf.model.load_format == "dummy"  # the shape experiment it builds on
    again = to_cell_config(compose_cell(["experiment=speed_llama3_1_8b", "speed.repeats=5"]))
    assert again.speed.repeats == 5  # the command line still has the last word
