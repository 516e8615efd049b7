"""GPQA with the simple-evals prompt, per (question, repeat) choice permutations and grading.

Permutations are drawn from ``random.Random(f"{seed}:{question_id}:{repeat}")``: unlike
simple-evals' single ``Random(0)`` stream they do not depend on dataset order, on ``limit`` or
on which variant runs, so every variant of a sweep sees identical prompts.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any, ClassVar, TypedDict

from evals.base import (
    AnswerKeyEntry,
    AnswerKind,
    Eval,
    EvalPrompt,
    QuestionText,
    RowsEval,
    question_id,
)
from evals.eval_conf import EvalConf
from evals.grading import extract_mcq_letter

log = logging.getLogger(__name__)

LETTERS = "ABCD"
COLUMNS = (
    "Question",
    "Correct Answer",
    "Incorrect Answer 1",
    "Incorrect Answer 2",
    "Incorrect Answer 3",
)
# openai/simple-evals common.QUERY_TEMPLATE_MULTICHOICE, verbatim (SGLang's in-tree GPQA uses it).
QUERY_TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. "
    "Think step by step before answering.\n\n{Question}\n\nA) {A}\nB) {B}\nC) {C}\nD) {D}"
)


def permutation(seed: int, qid: str, repeat: int) -> list[int]:
    """Order of ``[correct, incorrect 1, incorrect 2, incorrect 3]`` shown as A-D.

    Args:
        seed: the eval's seed (shared by every variant).
        qid: the question id.
        repeat: the repeat index.

    Returns:
        A permutation of ``range(4)``; position i shows choice ``perm[i]``.
    """
    return random.Random(f"{seed}:{qid}:{repeat}").sample(range(4), 4)


def format_prompt(question: str, options: list[str]) -> str:
    """Fill the simple-evals template with a question and four options in display order."""
    return QUERY_TEMPLATE.format(Question=question, **dict(zip(LETTERS, options, strict=True)))


class GpqaEval(RowsEval):
    """GPQA (diamond / main / extended, or any file with GPQA's columns)."""

    answer_kinds: tuple[AnswerKind, ...] = ("mcq",)
    columns: ClassVar[tuple[str, ...]] = COLUMNS

    def __init__(self, name: str, conf: EvalConf, rows: Sequence[dict[str, Any]]) -> None:
        """Build the questions from ``rows`` (see ``RowsEval``)."""
        super().__init__(name, conf)
        self.questions = _unique_questions(rows, name)

    def prompts(self) -> list[EvalPrompt]:
        """Every question at every repeat, repeat-major (repeat 0 of all questions first)."""
        return [
            self._prompt(q, repeat) for repeat in range(self.conf.repeats) for q in self.questions
        ]

    def _prompt(self, q: GpqaQuestion, repeat: int) -> EvalPrompt:
        perm = permutation(self.conf.seed, q["id"], repeat)
        options = [q["choices"][i] for i in perm]
        return EvalPrompt(
            question_id=q["id"],
            repeat=repeat,
            messages=[{"role": "user", "content": format_prompt(q["question"], options)}],
            answer=LETTERS[perm.index(0)],
            meta={"permutation": perm},
            question=QuestionText(
                q["question"], tuple(q["choices"]), gold=q["choices"][0], permuted=True
            ),
        )

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Extract the letter from ``content`` (never reasoning) and compare it with the key."""
        letter = extract_mcq_letter(content, LETTERS)
        return letter, letter is not None and letter == prompt.answer

    def answer_key(self) -> list[AnswerKeyEntry]:
        """One ``{"question", "answer", "kind": "mcq"}`` per question, texts as in the prompt."""
        return [
            {"question": q["question"], "answer": q["choices"][0], "kind": "mcq"}
            for q in self.questions
        ]


class GpqaQuestion(TypedDict):
    """A dataset row made a question: its id, text, and choices with the correct one first."""

    id: str
    question: str
    choices: list[str]  # [correct, incorrect 1, incorrect 2, incorrect 3]


def _unique_questions(rows: Sequence[dict[str, Any]], name: str) -> list[GpqaQuestion]:
    # Pairing across variants is by question id, so a repeated question text would make two
    # rows collide; the first occurrence is kept and the rest reported.
    questions: dict[str, GpqaQuestion] = {}
    for number, row in enumerate(rows, start=1):
        text = str(row["Question"]).strip()
        qid = question_id(text)
        if qid in questions:
            log.warning("%s: row %d repeats the question of an earlier row; skipped", name, number)
            continue
        choices = [str(row[c]).strip() for c in COLUMNS[1:]]
        questions[qid] = {"id": qid, "question": text, "choices": choices}
    return list(questions.values())


_CHECKED: type[Eval] = GpqaEval  # mypy checks the class against the eval protocol
