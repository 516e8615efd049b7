"""What each eval records of its questions for the report, and where the runner writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals.base import KEPT_CHARS, KEPT_TAIL, EvalPrompt, QuestionText
from evals.eval_conf import EvalConf
from evals.gpqa import LETTERS, GpqaEval
from evals.gsm8k import Gsm8kEval
from evals.lm_eval_model import RequestLog
from evals.lm_eval_records import build_records, question_of
from evals.mmlu import MmluEval
from evals.mtbench import MtBenchEval
from pipeline.measuring.evaluation import blocked_record, with_meta


def by_repeat(prompts: list[EvalPrompt]) -> dict[int, list[EvalPrompt]]:
    out: dict[int, list[EvalPrompt]] = {}
    for prompt in prompts:
        out.setdefault(prompt.repeat, []).append(prompt)
    return out


def test_gpqa_keeps_the_options_in_the_dataset_order_and_says_they_are_shuffled() -> None:
    row = {"Question": " Which? ", "Correct Answer": "right", "Incorrect Answer 1": "w1",
           "Incorrect Answer 2": "w2", "Incorrect Answer 3": "w3"}  # fmt: skip
    ev = GpqaEval("g", EvalConf(kind="gpqa", repeats=3), [row])
    for prompt in ev.prompts():
        assert prompt.question == QuestionText("Which?", ("right", "w1", "w2", "w3"), "right", True)
        # The letter graded right names the right option through this repeat's permutation.
        shown = prompt.meta["permutation"][LETTERS.index(prompt.answer)]
        assert prompt.question.options[shown] == "right"


def test_mmlu_gsm8k_and_mtbench_questions() -> None:
    mmlu = MmluEval("m", EvalConf(kind="mmlu"), [{"question": "Capital?",
                    "choices": ["Lyon", "Paris"], "answer": 1}])  # fmt: skip
    assert mmlu.prompts()[0].question == QuestionText("Capital?", ("Lyon", "Paris"), "Paris")
    gsm = Gsm8kEval("s", EvalConf(kind="gsm8k"), [{"question": "2+2?", "answer": "so\n#### 4"}])
    assert gsm.prompts()[0].question == QuestionText("2+2?", gold="4")
    mt = MtBenchEval("mt", EvalConf(kind="mtbench"), [{"prompt": ["Write.", "Shorter."]}])
    first = mt.prompts()[0]
    assert first.question == QuestionText("Turn 1: Write.")
    record = {"question_id": first.question_id, "repeat": 0, "response": "a poem"}
    second = mt.next_turns([record])[0][0]
    assert second.question == QuestionText("Turn 2: Shorter.")


@pytest.mark.parametrize(
    ("shown", "written"),
    [
        (QuestionText("Q?"), {"text": "Q?"}),  # empty fields left out: samples stay small
        (QuestionText("Q?", ("a", "b"), "b"), {"text": "Q?", "options": ["a", "b"], "gold": "b"}),
        (QuestionText("Q?", ("a",), "a", True),
         {"text": "Q?", "options": ["a"], "gold": "a", "permuted": True}),
    ],
)  # fmt: skip
def test_question_as_json(shown: QuestionText, written: dict[str, Any]) -> None:
    assert shown.as_json() == written
    assert json.loads(json.dumps(shown.as_json())) == written


@pytest.mark.parametrize("repeat", [0, 1, 5])
def test_only_the_repeat_0_line_carries_the_question(repeat: int) -> None:
    prompt = EvalPrompt("q", repeat, [], "A", {"turn": 2}, QuestionText("Q?", gold="A"))
    record = with_meta({"question_id": "q", "repeat": repeat}, prompt)
    assert record["meta"] == {"turn": 2}
    assert ("question" in record) is (repeat == 0)
    assert ("question" in blocked_record(prompt)) is (repeat == 0)  # an unsent turn too
    bare = EvalPrompt("q", 0, [], "A", {})
    assert "question" not in with_meta({}, bare)  # an eval that records none


@pytest.mark.parametrize(
    ("prompt", "target", "shown"),
    [
        (json.dumps([{"role": "system", "content": "be brief"},
                     {"role": "user", "content": "Q: 1+1?"}, {"role": "assistant", "content": "2"},
                     {"role": "user", "content": "Q: 2+2?"}]),
         "#### 4", QuestionText("Q: 2+2?", gold="#### 4")),  # few-shot chat: the last question
        ("Question: 3+3?\nAnswer:", 6, QuestionText("Question: 3+3?\nAnswer:", gold="6")),
        ('{"not": "a chat"}', None, QuestionText('{"not": "a chat"}')),
        (None, "4", None),
    ],
)  # fmt: skip
def test_lm_eval_question_of(prompt: str | None, target: object, shown: Any) -> None:
    assert question_of(prompt, target) == shown


def test_lm_eval_records_carry_the_question_on_repeat_0() -> None:
    prompt = json.dumps([{"role": "user", "content": "Question: 2 + 2?"}])
    sample = {"doc_id": 0, "doc": {}, "target": "4", "arguments": [[[prompt], {}]],
              "resps": [["4"], ["4"]], "filtered_resps": ["4"], "filter": "strict",
              "metrics": ["exact_match"], "doc_hash": "h0", "exact_match": 1.0}  # fmt: skip
    records, _ = build_records("t", [sample], RequestLog())
    assert [r.get("question") for r in records] == [
        {"text": "Question: 2 + 2?", "gold": "4"},
        None,
    ]


@pytest.mark.parametrize(
    ("length", "kept"),
    [(10, 10), (KEPT_CHARS, KEPT_CHARS), (KEPT_CHARS + 1, None), (40_000, None)],
)
def test_a_haystack_keeps_its_start_and_end(length: int, kept: int | None) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    written = QuestionText(text, (text,), gold=text).as_json()
    for value in (written["text"], written["options"][0], written["gold"]):
        if kept is not None:
            assert value == text
            continue
        assert value.startswith(text[: KEPT_CHARS - KEPT_TAIL])
        assert value.endswith(text[-KEPT_TAIL:])  # where a retrieval prompt asks its question
        assert f"[... {length - KEPT_CHARS:,} characters left out ...]" in value
