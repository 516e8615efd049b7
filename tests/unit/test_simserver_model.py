"""The simulated model: finding the question, answering it, lengths and determinism."""

from __future__ import annotations

import re

import pytest

from pipeline.simserver.model import AnswerIndex, hash_units, plan_completion, truncate
from pipeline.simserver.simconfig import AnswerEntry

MCQ = AnswerEntry("Which planet is the largest?\nPick one.", "Jupiter", "mcq")
NUM = AnswerEntry("How many legs do 3 spiders have?", "24", "numeric")
INDEX = AnswerIndex([MCQ, NUM])
MCQ_PROMPT = (
    "Answer the following multiple choice question.\n\nWhich planet is the largest?\nPick one.\n\n"
    "A) Mars\nB) Venus\nC) Jupiter\nD) Earth"
)
NUM_PROMPT = "Solve it.\nHow many legs do 3 spiders have?\nEnd with 'The final answer is N'."


def plan(prompt: str, accuracy: float, mean: int = 40, cap: int | None = None, seed: str = "0"):
    return plan_completion(INDEX, prompt, hash_units(seed, prompt), accuracy, mean, cap)


def text(c) -> str:
    return "".join(c.tokens)


@pytest.mark.parametrize(
    ("prompt", "accuracy", "answer", "correct", "last_line"),
    [
        (MCQ_PROMPT, 1.0, "C", True, "Answer: C"),
        (NUM_PROMPT, 1.0, "24", True, "The final answer is 24"),
    ],
)
def test_right_answers(prompt, accuracy, answer, correct, last_line) -> None:
    c = plan(prompt, accuracy)
    assert (c.answer, c.correct, c.finish_reason) == (answer, correct, "stop")
    assert text(c).splitlines()[-1] == last_line


def test_wrong_mcq_answer_is_another_offered_letter() -> None:
    letters = {plan(MCQ_PROMPT, 0.0, seed=str(s)).answer for s in range(40)}
    assert letters == {"A", "B", "D"}


def test_wrong_number_differs() -> None:
    c = plan(NUM_PROMPT, 0.0)
    assert c.correct is False and c.answer != "24" and re.fullmatch(r"\d+", c.answer or "")


def test_unknown_prompt_has_nothing_to_grade() -> None:
    c = plan("Tell me a story about a dragon.", 1.0)
    assert (c.question_key, c.kind, c.correct, c.answer) == (None, None, None, None)
    assert not re.search(r"\b[A-D]\b", text(c))


def test_question_key_is_the_first_line() -> None:
    assert plan(MCQ_PROMPT, 1.0).question_key == "Which planet is the largest?"


def test_one_word_is_one_token_and_length_is_around_the_mean() -> None:
    lengths = []
    for s in range(200):
        c = plan(MCQ_PROMPT, 0.5, mean=100, seed=str(s))
        assert len(text(c).split()) == len(c.tokens)
        lengths.append(len(c.tokens))
    assert min(lengths) >= 50 and max(lengths) <= 150
    assert sum(lengths) / len(lengths) == pytest.approx(100, rel=0.08)


def test_cap_cuts_before_the_answer() -> None:
    c = plan(MCQ_PROMPT, 1.0, cap=10)
    assert (len(c.tokens), c.finish_reason, c.answer, c.correct) == (10, "length", None, False)
    assert "Answer:" not in text(c)


def test_cap_above_the_length_changes_nothing() -> None:
    full = plan(MCQ_PROMPT, 1.0)
    assert truncate(full, len(full.tokens)) == full


def test_deterministic_and_paired_across_accuracies() -> None:
    prompts = [MCQ_PROMPT + f"\n(repeat {i})" for i in range(300)]
    first = [plan(p, 0.7) for p in prompts]
    assert first == [plan(p, 0.7) for p in prompts]
    good = {p for p, c in zip(prompts, first, strict=True) if c.correct}
    worse = {p for p in prompts if plan(p, 0.5).correct}
    assert worse < good
    assert 0.6 < len(good) / len(prompts) < 0.8


def test_multiline_option_matches_by_first_line() -> None:
    entry = AnswerEntry("Pick the formula.", "x + 1\nfor all x", "mcq")
    prompt = "Pick the formula.\n\nA) x - 1\nB) x + 1\nfor all x\nC) 2x\nD) 0"
    c = plan_completion(AnswerIndex([entry]), prompt, hash_units("0", prompt), 1.0, 20, None)
    assert c.answer == "B"


def test_letter_only_answer_key() -> None:
    entry = AnswerEntry("Which one?", "D", "mcq")
    prompt = "Which one?\nA) a\nB) b\nC) c\nD) d"
    c = plan_completion(AnswerIndex([entry]), prompt, hash_units("0", prompt), 1.0, 20, None)
    assert c.answer == "D"


def test_hash_units_are_uniform_and_independent() -> None:
    units = [hash_units("0", str(i)) for i in range(2000)]
    for k in range(4):
        column = [u[k] for u in units]
        assert all(0.0 <= u < 1.0 for u in column)
        assert sum(column) / len(column) == pytest.approx(0.5, abs=0.03)
