"""The questions whose correctness moved most between a baseline and a candidate (pure).

What the HTML report's "Questions that changed" view shows, so that a NO-GO can be read question
by question without ``jq`` over the samples files: per question, the share of repeats each side
got right, and each repeat's extracted answer and response.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pipeline.report.pairing import Samples


@dataclass(frozen=True)
class Answer:
    """One repeat of one question on one side."""

    repeat: int
    extracted: str | None
    correct: bool
    response: str | None
    error_kind: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class ChangedQuestion:
    """A question asked of both sides, with how its correctness moved."""

    question_id: str
    gold: str | None  # "per repeat" when it differs by repeat (shuffled choices)
    baseline: tuple[Answer, ...]
    candidate: tuple[Answer, ...]

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


def _answer(record: dict[str, Any]) -> Answer:
    return Answer(
        repeat=int(record["repeat"]),
        extracted=_text(record.get("extracted")),
        correct=bool(record["correct"]),
        response=_text(record.get("response")),
        error_kind=_text(record.get("error_kind")),
        finish_reason=_text(record.get("finish_reason")),
    )


def _by_question(samples: Samples) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (question, _), record in sorted(samples.items()):
        out[question].append(record)
    return out


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
    for question in sorted(base.keys() & cand.keys()):
        rows = base[question]
        golds = sorted({str(r.get("answer")) for r in rows if r.get("answer") is not None})
        item = ChangedQuestion(
            question_id=question,
            gold=golds[0] if len(golds) == 1 else ("per repeat" if golds else None),
            baseline=tuple(_answer(r) for r in rows),
            candidate=tuple(_answer(r) for r in cand[question]),
        )
        if item.change:
            found.append(item)
    found.sort(key=lambda q: (-abs(q.change), q.question_id))
    return found[:limit]
