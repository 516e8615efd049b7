"""SPEED-Bench rows: first turns by category and bucket; placeholders, columns refused clearly."""

from __future__ import annotations

import pytest

from evals.base import make_eval
from evals.datasets import DatasetError
from evals.eval_conf import DatasetConf, EvalConf, SpeedBenchConf
from evals.speed_bench import PLACEHOLDER, SpeedBenchEval, first_turn


def _eval(rows, node=None, repeats=1):
    conf = EvalConf(kind="speed_bench", dataset=DatasetConf(source="bundled", path="x.jsonl"),
                    repeats=repeats, speed_bench=node)  # fmt: skip
    return SpeedBenchEval("sb", conf, rows)


def _row(qid, category, turns):
    return {"question_id": qid, "category": category, "turns": turns}


def test_the_bundled_sample_has_eleven_categories_of_two_and_is_not_graded():
    sample = DatasetConf(source="bundled", path="speed_bench_sample.jsonl")
    conf = EvalConf(kind="speed_bench", dataset=sample)
    ev = make_eval("sb", conf)
    prompts = ev.prompts()
    categories = [p.meta["category"] for p in prompts]
    assert len(set(categories)) == 11 and all(categories.count(c) == 2 for c in categories)
    assert len({p.question_id for p in prompts}) == 22
    assert ev.graded is False and ev.answer_key() == []
    assert ev.grade(prompts[0], "anything") == (None, False)


@pytest.mark.parametrize(
    ("turns", "first"),
    [(["a", "b"], "a"), ([{"role": "user", "content": " a "}], "a"), ([], None), ("a", None),
     ([""], None)],
)  # fmt: skip
def test_first_turn(turns, first):
    assert first_turn(turns) == first


def test_a_category_and_a_bucket_are_kept_per_prompt_and_a_filter_keeps_one():
    rows = [_row("1", "math", ["x"]), _row("2", "qa", ["y"]), _row("3", "math", ["z"])]
    ev = _eval(rows, SpeedBenchConf(bucket="8k", category="math"), repeats=2)
    assert [(p.question_id, p.repeat) for p in ev.prompts()] == [("1", 0), ("3", 0), ("1", 1),
                                                                  ("3", 1)]  # fmt: skip
    assert {p.meta["bucket"] for p in ev.prompts()} == {"8k"}
    with pytest.raises(DatasetError, match="no row of category 'coding'"):
        _eval(rows, SpeedBenchConf(category="coding"))


@pytest.mark.parametrize(
    ("turns", "says"),
    [([PLACEHOLDER + " USING SPECDEC_BENCH"], "holds a placeholder"), ([], "has no user turn")],
)
def test_a_row_without_its_prompt_names_row_column_and_the_fix(turns, says):
    with pytest.raises(DatasetError) as err:
        _eval([_row("1", "qa", ["fine"]), _row("2", "qa", turns)])
    text = str(err.value)
    assert "row 2, column 'turns'" in text and says in text
    assert "examples/specdec_bench" in text and "dataset.path=<that folder>" in text


def test_column_names_are_settings():
    rows = [{"id": "1", "domain": "qa", "messages": [{"role": "user", "content": "hi"}]}]
    node = SpeedBenchConf(id_column="id", category_column="domain", turns_column="messages")
    ev = _eval(rows, node)
    assert [(p.question_id, p.meta["category"], p.messages[0]["content"]) for p in ev.prompts()] \
        == [("1", "qa", "hi")]  # fmt: skip
    with pytest.raises(DatasetError, match=r"speed_bench\.turns_column"):
        _eval(rows)
