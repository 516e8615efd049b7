"""The speed phase's eval prompts (``speed.prompts=eval:NAME``): parsing, cutting, refusing."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from backends.backend_conf import ModelConf
from evals.base import make_eval
from evals.chat_tokens import TokenizerError, chat_ids, load_tokenizer, tokenizer_problem
from evals.eval_conf import DatasetConf, EvalConf
from pipeline.cell.cell_result import measured_config
from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.prompt_source import eval_name, source_problems, tokenizer_source
from pipeline.config.schema import SpeedConf
from pipeline.measuring.speed.plan import DECODE, PREFILL, SpeedShape, TokenRange, prompt_ids
from pipeline.measuring.speed.prompts import (
    PromptPool,
    RunPrompts,
    cell_prompt_pool,
    distinct_prompts,
    eval_prompt_pool,
    pool_prompts,
    shape_note,
    shared_prefix,
)
from pipeline.results.cell_error import CellError
from pipeline.serving.server_kind import ServerPlan
from tests.unit.test_config import compose_cell

TRAINED = Path(__file__).resolve().parents[2] / "benchmarks/results/live-h200/trained-model/target"
POOL = PromptPool("eval:x", "tok", ((1, 2, 3, 4, 5, 6), (1, 2, 9, 9), (1, 2, 7, 7, 7, 7, 7, 7)))


@pytest.mark.parametrize(
    ("text", "name"),
    [("random", None), ("eval:synth_retrieval", "synth_retrieval"), ("eval:a:b", "a:b")],
)
def test_speed_prompts_names_random_or_an_eval(text: str, name: str | None) -> None:
    assert eval_name(text) == name


@pytest.mark.parametrize("text", ["eval:", "synth_retrieval", "Random", ""])
def test_another_speed_prompts_value_is_refused_with_the_two_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"use random .* or eval:NAME"):
        eval_name(text)


@pytest.mark.parametrize(
    ("prompts", "evals", "problem"),
    [
        ("random", [], None),
        ("eval:b", ["a", "b"], None),
        ("eval:c", ["a", "b"], "names an eval the cell does not run (evals=[a,b]): add c"),
        ("evil:c", ["c"], "use random"),
    ],
)
def test_the_source_must_be_an_eval_of_the_cell(
    prompts: str, evals: list[str], problem: str | None
) -> None:
    found = source_problems(SpeedConf(prompts=prompts), evals)
    assert (found == []) if problem is None else (problem in found[0]), found


@pytest.mark.parametrize(
    ("prompts", "shared"),
    [
        ([], 0),
        ([(5, 6)], 2),
        ([(1, 2, 3), (1, 2, 4)], 2),
        ([(1, 2, 3), (1, 2)], 2),  # the shorter one ends inside the other
        ([(9,), (1, 2)], 0),
    ],
)
def test_shared_prefix_counts_the_opening_every_prompt_has(
    prompts: list[tuple[int, ...]], shared: int
) -> None:
    assert shared_prefix(prompts) == shared


def test_distinct_prompts_keeps_the_eval_order_once_each() -> None:
    repeats = [[{"content": "b"}], [{"content": "a"}], [{"content": "b"}], [{"content": ""}]]
    ids = distinct_prompts(repeats, lambda m: [ord(c) for c in m[0]["content"]])
    assert ids == [(98,), (97,)]  # the repeat once, the empty prompt left out


@pytest.mark.parametrize(
    ("shape", "serial", "sent"),
    [
        (SpeedShape(PREFILL, 1, 4, 1), 0, [[1, 2, 3, 4]]),  # cut to the shape's length
        (SpeedShape(PREFILL, 1, 4, 1), 1, [[1, 2, 9, 9]]),
        (SpeedShape(PREFILL, 1, 4, 1), 3, [[1, 2, 3, 4]]),  # past the pool: in turn again
        (SpeedShape(PREFILL, 2, 6, 1), 0, [[1, 2, 3, 4, 5, 6], [1, 2, 7, 7, 7, 7]]),  # long enough
        (SpeedShape(PREFILL, 2, 6, 1), 1, [[1, 2, 7, 7, 7, 7], [1, 2, 3, 4, 5, 6]]),
        (SpeedShape(DECODE, 3, 2, 8), 0, [[1, 2], [1, 2], [1, 2]]),
    ],
)
def test_a_run_sends_distinct_prompts_cut_to_the_length(
    shape: SpeedShape, serial: int, sent: list[list[int]]
) -> None:
    assert shape_note(POOL, shape) is None
    assert pool_prompts(POOL, shape, serial) == sent


@pytest.mark.parametrize(
    ("shape", "says"),
    [
        (SpeedShape(PREFILL, 1, 9, 1), "has 0 distinct prompts of 9 tokens or more (the longest"),
        (SpeedShape(PREFILL, 3, 6, 1), "has 2 distinct prompts of 6 tokens or more"),
    ],
)
def test_a_shape_the_prompts_cannot_fill_is_skipped_not_tiled(shape: SpeedShape, says: str) -> None:
    note = shape_note(POOL, shape)
    assert note is not None and note.startswith(f"{shape.label} skipped: speed.prompts=eval:x")
    assert says in note and "not tiled" in note


def test_the_block_says_where_the_prompts_came_from() -> None:
    assert RunPrompts(None, POOL, 0).describe() == {
        "prompts": {
            "source": "eval:x", "tokenizer": "tok", "distinct": 3, "shortest": 4, "longest": 8,
            "shared_prefix_tokens": 2, "radix_cache": "flushed before every run",
        }
    }  # fmt: skip
    ids = TokenRange(32, 256, "speed.vocab_size")
    assert RunPrompts(ids, None, 0).describe() == {
        "token_ids": {"low": 32, "high": 256, "source": "speed.vocab_size"}
    }


def test_only_an_eval_pool_flushes_the_cache_before_its_runs() -> None:
    flushed: list[int] = []
    shape = SpeedShape(PREFILL, 2, 4, 1)
    ids = TokenRange(32, 256, "speed.vocab_size")
    randoms = RunPrompts(ids, None, 7).of_run(shape, 3, lambda: flushed.append(1))
    assert randoms == [prompt_ids(ids, 7, 3, 4), prompt_ids(ids, 7, 4, 4)] and flushed == []
    RunPrompts(None, POOL, 7).of_run(shape, 3, lambda: flushed.append(1))
    assert flushed == [1]


@pytest.mark.parametrize(
    ("model", "found"),
    [
        (ModelConf(path="m"), ("m", "model.path")),
        (ModelConf(path="m", tokenizer_path="t"), ("t", "model.tokenizer_path")),
    ],
)
def test_the_tokenizer_is_the_models_unless_tokenizer_path_says(
    model: ModelConf, found: tuple[str, str]
) -> None:
    assert tokenizer_source(model) == found


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (None, "model.path is unset"),
        ("tiny-sim", "model.path='tiny-sim' is not a local folder"),
        (str(TRAINED.parent), "holds none of tokenizer.json"),
        (str(TRAINED), None),
    ],
)
def test_a_model_without_a_local_tokenizer_is_named_with_the_fix(
    path: str | None, says: str | None
) -> None:
    problem = tokenizer_problem(path, "model.path")
    if says is None:
        assert problem is None
    else:
        assert problem is not None and says in problem and "model.tokenizer_path" in problem


def test_no_tokenizer_is_a_tokenizer_error_naming_the_key() -> None:
    with pytest.raises(TokenizerError, match=r"model\.tokenizer_path='nowhere' is not a local"):
        load_tokenizer("nowhere", "model.tokenizer_path")


def _retrieval() -> Any:
    data = DatasetConf(source="bundled", path="synth_retrieval.jsonl")
    conf = EvalConf(kind="gsm8k", dataset=data)
    return make_eval("synth_retrieval", dataclasses.replace(conf, repeats=2))


def test_the_pool_is_the_evals_prompts_under_the_models_chat_template() -> None:
    retrieval = _retrieval()
    model = ModelConf(path="tiny-sim", tokenizer_path=str(TRAINED))
    pool = eval_prompt_pool(SpeedConf(enabled=True, prompts="eval:r"), {"r": retrieval}, model)
    assert pool is not None and pool.source == "eval:r" and pool.tokenizer == str(TRAINED)
    tok = load_tokenizer(str(TRAINED), "model.tokenizer_path")
    firsts = [p.messages for p in retrieval.prompts() if p.repeat == 0]
    assert list(pool.prompts) == [tuple(chat_ids(tok, m)) for m in firsts]  # repeats once
    # The byte-level tokenizer: the chat template's opening, then the question's bytes.
    question = firsts[0][-1]["content"].encode()
    assert bytes(i for i in pool.prompts[0] if i < 256).find(question[:200]) >= 0
    assert min(map(len, pool.prompts)) > 4000 and max(map(len, pool.prompts)) < 17000


def test_random_ids_or_speed_off_build_no_pool() -> None:
    model = ModelConf(path="nowhere")  # no tokenizer is read
    assert eval_prompt_pool(SpeedConf(enabled=True), {}, model) is None
    assert eval_prompt_pool(SpeedConf(prompts="eval:r"), {}, model) is None


def test_the_config_check_refuses_an_eval_the_cell_does_not_run() -> None:
    base = ["speed.enabled=true", "evals=[mcq_sample]"]
    with pytest.raises(ConfigError, match=r"speed\.prompts=eval:synth_retrieval names an eval"):
        to_cell_config(compose_cell([*base, "speed.prompts=eval:synth_retrieval"]))
    conf = to_cell_config(compose_cell([*base, "speed.prompts=eval:mcq_sample"]))
    assert conf.speed.prompts == "eval:mcq_sample"


def test_the_default_source_keeps_a_speed_cells_config_hash() -> None:
    on = to_cell_config(compose_cell(["speed.enabled=true"]))
    kind = ServerPlan.of(on.server).kind
    assert "prompts" not in measured_config(on, kind)["speed"]  # as before speed.prompts
    real = to_cell_config(compose_cell(["speed.enabled=true", "speed.prompts=eval:mcq_sample"]))
    assert measured_config(real, kind)["speed"]["prompts"] == "eval:mcq_sample"


def test_a_cell_without_a_tokenizer_fails_as_a_config_error_naming_the_key() -> None:
    speed = SpeedConf(enabled=True, prompts="eval:r")
    with pytest.raises(CellError, match=r"model\.path='nowhere' is not a local folder") as err:
        cell_prompt_pool(speed, {"r": _retrieval()}, ModelConf(path="nowhere"))
    assert err.value.kind == "config"
    with pytest.raises(CellError, match="names an eval the cell does not run"):
        cell_prompt_pool(speed, {}, ModelConf(path=str(TRAINED)))
