"""Each eval kind built from literal rows: datasets load apart from prompting and grading.

An eval class takes ``(name, conf, rows)``; ``make_eval`` loads the rows. These tests give the
rows directly (no file, no download) and check what the runner reads off the protocol: label,
graded, shape, prompts, grading and the answer key. The harness kind reads its documents through
lm-eval, so its literal rows are a task folder written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.base import (
    HARNESS,
    MULTI_TURN,
    SINGLE_TURN,
    is_harness,
    is_multi_turn,
    known_kinds,
    make_eval,
    question_id,
)
from evals.eval_conf import DatasetConf, EvalConf
from evals.gpqa import GpqaEval
from evals.gsm8k import Gsm8kEval
from evals.lm_eval_bridge import LmEvalEval
from evals.mmlu import MmluEval
from evals.mtbench import MtBenchEval, turn_id
from tests.helpers.lm_eval_task import literal_task


def test_gpqa_from_rows() -> None:
    row = {
        "Question": "Which planet is largest?",
        "Correct Answer": "Jupiter",
        "Incorrect Answer 1": "Mars",
        "Incorrect Answer 2": "Venus",
        "Incorrect Answer 3": "Mercury",
    }
    ev = GpqaEval("gq", EvalConf(kind="gpqa", repeats=2, label="GPQA tiny"), [row])
    assert (ev.label, ev.graded, ev.shape) == ("GPQA tiny", True, SINGLE_TURN)
    prompts = ev.prompts()
    assert [p.repeat for p in prompts] == [0, 1]
    for p in prompts:
        shown = p.messages[0]["content"]
        assert f"{p.answer}) Jupiter" in shown
        assert ev.grade(p, f"Thinking.\nAnswer: {p.answer}") == (p.answer, True)
        wrong = next(letter for letter in "ABCD" if letter != p.answer)
        assert ev.grade(p, f"Answer: {wrong}") == (wrong, False)
    assert ev.answer_key() == [
        {"question": "Which planet is largest?", "answer": "Jupiter", "kind": "mcq"}
    ]


def test_gsm8k_from_rows() -> None:
    rows = [{"question": "Tom has 3 apples and buys 4. How many?", "answer": "3 + 4 = 7\n#### 7"}]
    ev = Gsm8kEval("g", EvalConf(kind="gsm8k"), rows)
    assert (ev.label, ev.graded, ev.shape) == ("g", True, SINGLE_TURN)
    (prompt,) = ev.prompts()
    assert prompt.question_id == question_id(rows[0]["question"]) and prompt.answer == "7"
    assert ev.grade(prompt, "So 7 apples. The final answer is 7") == ("7", True)
    assert ev.grade(prompt, "The final answer is 8") == ("8", False)


def test_mmlu_from_rows() -> None:
    rows = [
        {"question": "2 + 2 = ?", "choices": ["3", "4", "5"], "answer": 1, "subject": "math"},
        {"question": "Capital of France?", "A": "Paris", "B": "Rome", "answer": "A"},
    ]
    ev = MmluEval("m", EvalConf(kind="mmlu"), rows)
    assert (ev.graded, ev.shape) == (True, SINGLE_TURN)
    first, second = ev.prompts()
    assert (first.answer, first.meta) == ("B", {"subject": "math", "n_options": 3})
    assert ev.grade(first, "Answer: B") == ("B", True)
    assert ev.grade(second, "Answer: B") == ("B", False)
    assert [e["answer"] for e in ev.answer_key()] == ["4", "Paris"]


def test_mtbench_from_rows() -> None:
    rows = [{"prompt": ["Write a haiku.", "Now make it rhyme."], "category": "writing"}]
    ev = MtBenchEval("mt", EvalConf(kind="mtbench"), rows)
    assert (ev.graded, ev.shape) == (False, MULTI_TURN) and is_multi_turn(ev)
    (first,) = ev.prompts()
    assert first.messages == [{"role": "user", "content": "Write a haiku."}]
    answered = {"question_id": first.question_id, "repeat": 0, "response": "Leaves fall."}
    (second,), blocked = ev.next_turns([answered])
    assert blocked == [] and second.question_id == turn_id(first.meta["conversation"], 2)
    assert [m["content"] for m in second.messages] == [
        "Write a haiku.",
        "Leaves fall.",
        "Now make it rhyme.",
    ]
    assert ev.grade(second, "anything") == (None, False)


def test_harness_reads_its_rows_through_its_task(tmp_path: Path) -> None:
    rows = [{"question": "What is 20 plus 22?", "answer": "42"}]
    dataset = literal_task(tmp_path, rows)
    ev = make_eval("lm", EvalConf(kind="lm_eval", dataset=dataset))
    assert isinstance(ev, LmEvalEval) and is_harness(ev)
    assert (ev.label, ev.graded, ev.shape) == ("lm-eval tiny_task", True, HARNESS)
    assert ev.prompts() == []  # lm-eval builds the prompts
    (entry,) = ev.answer_key()
    assert entry["answer"] == "42" and "What is 20 plus 22?" in entry["question"]


@pytest.mark.parametrize("kind", [k for k in known_kinds() if k != "lm_eval"])
def test_make_eval_checks_repeats_before_loading(kind: str) -> None:
    # A dataset that cannot load: the repeats error must come first (no wasted download).
    dataset = DatasetConf(source="file", path="/no/such/rows.jsonl")
    with pytest.raises(ValueError, match=r"evals\.x\.repeats=0"):
        make_eval("x", EvalConf(kind=kind, dataset=dataset, repeats=0))
