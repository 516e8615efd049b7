"""The eval <-> simulated server contract: every registered kind answers its own key.

Each registered eval kind is built through the registry from literal rows; its answer key goes
through the simulated server's own reader and model, and the eval grades the server's right answer
right and its wrong answer wrong. A new kind without literal rows here fails the first test, so a
new eval cannot score 0.000 on the simulated server unnoticed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from evals import base
from evals.base import ANSWER_KINDS, AnswerKeyEntry, RowsEval, check_answer_kinds, make_eval
from evals.eval_conf import DatasetConf, EvalConf, LongCtxConf
from pipeline.simserver import simconfig
from pipeline.simserver.model import AnswerIndex, hash_units, plan_completion
from pipeline.simserver.simconfig import load_answer_key
from tests.helpers.lm_eval_task import literal_task

GPQA_ROW = {
    "Question": "Which planet is largest?", "Correct Answer": "Jupiter",
    "Incorrect Answer 1": "Mars", "Incorrect Answer 2": "Venus", "Incorrect Answer 3": "Mercury",
}  # fmt: skip
ROWS: dict[str, list[dict[str, Any]]] = {
    "gpqa": [GPQA_ROW],
    "gsm8k": [{"question": "Tom has 3 apples and buys 4. How many?", "answer": "7\n#### 7"}],
    "mmlu": [
        {"question": "2 + 2 = ?", "choices": ["3", "4", "5"], "answer": 1},
        {"question": "Capital of France?", "A": "Paris", "B": "Rome", "answer": "A"},
    ],
    "mtbench": [{"prompt": ["Write a haiku.", "Now make it rhyme."], "category": "writing"}],
    "lm_eval": [{"question": "What is 20 plus 22?", "answer": "42"}],
    "longctx": [],  # generated: no rows (_generated_conf)
    "speed_bench": [{"question_id": "q1", "category": "coding", "turns": ["Write a sort."]}],
}  # fmt: skip


def _rows_conf(kind: str, tmp_path: Path) -> EvalConf:
    path = tmp_path / f"{kind}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[kind]), encoding="utf-8")
    return EvalConf(kind=kind, dataset=DatasetConf(source="file", path=str(path)))


def _harness_conf(kind: str, tmp_path: Path) -> EvalConf:
    return EvalConf(kind=kind, dataset=literal_task(tmp_path, ROWS[kind]))


def _generated_conf(kind: str, tmp_path: Path) -> EvalConf:
    node = LongCtxConf(task="niah_multivalue", lengths=[600, 900], samples=2, tokens="sim")
    return EvalConf(kind=kind, dataset=DatasetConf(source="generated", path="longctx"),
                    longctx=node)  # fmt: skip


CONFS: dict[str, Callable[[str, Path], EvalConf]] = {
    "lm_eval": _harness_conf, "longctx": _generated_conf,
}  # fmt: skip


def test_every_registered_kind_has_literal_rows_here():
    assert sorted(ROWS) == base.known_kinds()


def test_both_sides_know_the_same_answer_kinds():
    assert simconfig.ANSWER_KINDS == ANSWER_KINDS


def _served_key(entries: list[AnswerKeyEntry], tmp_path: Path) -> AnswerIndex:
    """The key as the simulated server reads it (its own reader refuses an unknown kind)."""
    path = tmp_path / "answer_key.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return AnswerIndex(load_answer_key(path))


@pytest.mark.parametrize("kind", sorted(ROWS))
def test_a_kind_built_from_literal_rows_answers_its_own_key(kind, tmp_path):
    ev = make_eval("x", CONFS.get(kind, _rows_conf)(kind, tmp_path))
    key = ev.answer_key()
    assert {e["kind"] for e in key} <= set(ev.answer_kinds)
    assert bool(key) == ev.graded  # an ungraded eval gives the server nothing to answer
    index = _served_key(key, tmp_path)
    texts = [p.messages[-1]["content"] for p in ev.prompts()] or [e["question"] for e in key]
    for text, prompt in zip(texts, ev.prompts() or [None] * len(texts), strict=True):
        for accuracy, right in ((1.0, True), (0.0, False)):
            reply = plan_completion(index, text, hash_units("0", text), accuracy, 40, None)
            if not ev.graded:
                assert reply.kind is None  # generic text: nothing to grade
                continue
            assert reply.kind in ev.answer_kinds and reply.correct is right, text
            if prompt is not None:  # a harness grades inside lm-eval (tests of the bridge)
                assert ev.grade(prompt, "".join(reply.tokens)) == (reply.answer, right), text
            else:
                entry = next(e for e in key if e["question"] == text)
                assert (reply.answer == entry["answer"]) is right


class YesNoEval(RowsEval):
    """What the issue's yes/no eval was: an answer kind no simulated server writes."""

    answer_kinds: ClassVar[tuple[str, ...]] = ("yes_no",)
    columns: ClassVar[tuple[str, ...]] = ()


def test_an_eval_whose_answer_kind_the_server_cannot_answer_is_refused(monkeypatch, tmp_path):
    monkeypatch.setitem(base._REGISTRY, "yes_no", f"{__name__}:YesNoEval")
    with pytest.raises(ValueError, match=r"evals\.x \(kind yes_no.*'yes_no' is unknown.*'mcq' or"):
        make_eval("x", EvalConf(kind="yes_no", dataset=DatasetConf(path="unused")))


@pytest.mark.parametrize(
    ("kinds", "refused"),
    [((), None), (("mcq", "numeric"), None), (("mcq", "essay"), "'essay' is unknown")],
)
def test_check_answer_kinds(kinds, refused):
    if refused is None:
        check_answer_kinds("e", kinds)
    else:
        with pytest.raises(ValueError, match=refused):
            check_answer_kinds("e", kinds)


def test_a_yes_no_question_as_the_walk_through_says_answers_its_own_key(tmp_path):
    # docs/architecture.md: a yes/no eval is mcq with the options A) yes / B) no in its prompt.
    row = {"question": "Is water wet?", "choices": ["yes", "no"], "answer": 0}
    path = tmp_path / "yes_no.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    ev = make_eval("yn", EvalConf(kind="mmlu", dataset=DatasetConf(source="file", path=str(path))))
    (prompt,) = ev.prompts()
    index = _served_key(ev.answer_key(), tmp_path)
    text = prompt.messages[-1]["content"]
    reply = plan_completion(index, text, hash_units("0", text), 1.0, 40, None)
    assert ev.grade(prompt, "".join(reply.tokens)) == ("A", True)
