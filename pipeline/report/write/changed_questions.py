"""The questions whose correctness moved most between a baseline and a candidate (pure).

What the HTML report's "Questions that changed" view shows, so that a NO-GO can be read question
by question without ``jq`` over the samples files: per question, its text, options and right
answer (the ``question`` object of its repeat-0 sample line; older samples have none, and the
question is then known by its hash id only), the share of repeats each side got right, and each
repeat's extracted answer and response.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.report.judge.pairing import Samples

LETTERS = "ABCDEFGHIJ"  # the option letters every multiple-choice eval's prompts use


@dataclass(frozen=True)
class Question:
    """What the samples recorded of a question (key ``question`` of its repeat-0 line)."""

    text: str
    options: tuple[str, ...] = ()  # in the dataset's order
    gold: str | None = None  # the right answer as a reader reads it
    permuted: bool = False  # each repeat shows the options in its sample's ``permutation``


@dataclass(frozen=True)
class Answer:
    """One repeat of one question on one side."""

    repeat: int
    extracted: str | None
    correct: bool
    response: str | None
    error_kind: str | None = None
    finish_reason: str | None = None
    gold: str | None = None  # this repeat's right answer as graded (a letter for MCQ)
    permutation: tuple[int, ...] | None = None  # position i of the prompt shows option perm[i]
    reasoning: str | None = None


@dataclass(frozen=True)
class ChangedQuestion:
    """A question asked of both sides, with how its correctness moved."""

    question_id: str
    gold: str | None  # "per repeat" when it differs by repeat and no text says it
    baseline: tuple[Answer, ...]
    candidate: tuple[Answer, ...]
    question: Question | None = None  # None: samples written before questions were recorded

    @property
    def baseline_rate(self) -> float:
        """The share of the baseline's repeats graded correct."""
        return _rate(self.baseline)

    @property
    def candidate_rate(self) -> float:
        """The share of the candidate's repeats graded correct."""
        return _rate(self.candidate)

    @property
    def change(self) -> float:
        """Candidate minus baseline share correct (negative: the candidate got worse)."""
        return self.candidate_rate - self.baseline_rate


def _rate(answers: tuple[Answer, ...]) -> float:
    return sum(a.correct for a in answers) / len(answers) if answers else 0.0


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _permutation(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None


def _answer(record: dict[str, Any]) -> Answer:
    return Answer(
        repeat=int(record["repeat"]),
        extracted=_text(record.get("extracted")),
        correct=bool(record["correct"]),
        response=_text(record.get("response")),
        error_kind=_text(record.get("error_kind")),
        finish_reason=_text(record.get("finish_reason")),
        gold=_text(record.get("answer")),
        permutation=_permutation(record.get("permutation")),
        reasoning=_text(record.get("reasoning_content")),
    )


def question_of(records: Iterable[dict[str, Any]]) -> Question | None:
    """The first ``question`` object among a question's records (None: none has one)."""
    for record in records:
        found = record.get("question")
        if isinstance(found, dict) and isinstance(found.get("text"), str):
            options = found.get("options")
            return Question(
                text=found["text"],
                options=tuple(str(o) for o in options) if isinstance(options, list) else (),
                gold=_text(found.get("gold")),
                permuted=found.get("permuted") is True,
            )
    return None


def option_index(question: Question | None, letter: str | None, answer: Answer) -> int | None:
    """Which of the question's options ``letter`` names in ``answer``'s prompt (None: none).

    A shuffled question (``permuted``) shows option ``permutation[i]`` at letter ``i``, so the
    same letter names another option at each repeat.
    """
    if question is None or not question.options or letter is None or len(letter) != 1:
        return None
    position = LETTERS.find(letter.upper())
    if position < 0:
        return None
    if question.permuted:
        perm = answer.permutation
        if perm is None or position >= len(perm):
            return None
        position = perm[position]
    return position if position < len(question.options) else None


def _by_question(samples: Samples) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (question, _), record in sorted(samples.items()):
        out[question].append(record)
    return out


def _gold(question: Question | None, rows: list[dict[str, Any]]) -> str | None:
    # The right answer as text where the samples say it, its letter too where that is fixed.
    golds = sorted({str(r.get("answer")) for r in rows if r.get("answer") is not None})
    if question is not None and question.gold is not None:
        fixed = len(golds) == 1 and question.options and not question.permuted
        return f"{golds[0]}) {question.gold}" if fixed else question.gold
    if len(golds) == 1:
        return golds[0]
    return "per repeat" if golds else None


def changed_questions(baseline: Samples, candidate: Samples, limit: int) -> list[ChangedQuestion]:
    """The ``limit`` questions asked of both sides whose share correct moved most.

    Questions that moved the same amount are ordered by id; a question that did not move is
    left out (so the list can be shorter than ``limit``, or empty).

    Args:
        baseline: the baseline's samples, keyed by (question id, repeat).
        candidate: the candidate's samples, keyed the same way.
        limit: how many questions to keep at most.
    """
    base, cand = _by_question(baseline), _by_question(candidate)
    found = []
    for question_id in sorted(base.keys() & cand.keys()):
        rows = base[question_id]
        shown = question_of([*rows, *cand[question_id]])
        item = ChangedQuestion(
            question_id=question_id,
            gold=_gold(shown, rows),
            baseline=tuple(_answer(r) for r in rows),
            candidate=tuple(_answer(r) for r in cand[question_id]),
            question=shown,
        )
        if item.change:
            found.append(item)
    found.sort(key=lambda q: (-abs(q.change), q.question_id))
    return found[:limit]
