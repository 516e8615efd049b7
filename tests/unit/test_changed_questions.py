"""The questions whose correctness moved most, from literal samples."""

from __future__ import annotations

from pipeline.report.changed_questions import changed_questions


def samples(rows: dict[str, list[bool]]) -> dict:
    return {(q, r): {"question_id": q, "repeat": r, "correct": ok, "answer": "A",
                     "extracted": "A" if ok else "B", "response": f"{q} {r}"}
            for q, marks in rows.items() for r, ok in enumerate(marks)}  # fmt: skip


BASE = samples({"q1": [True] * 4, "q2": [True, True, False, False], "q3": [True] * 4,
                "q4": [False] * 4, "only_base": [True] * 4})  # fmt: skip
CAND = samples({"q1": [False] * 4, "q2": [True] * 4, "q3": [True] * 4,
                "q4": [False, False, False, True], "only_cand": [False] * 4})  # fmt: skip


def test_most_moved_first_unchanged_and_unpaired_left_out() -> None:
    found = changed_questions(BASE, CAND, limit=10)
    assert [(q.question_id, q.change) for q in found] == [("q1", -1.0), ("q2", 0.5), ("q4", 0.25)]
    first = found[0]
    assert (first.baseline_rate, first.candidate_rate, first.gold) == (1.0, 0.0, "A")
    assert [a.extracted for a in first.candidate] == ["B"] * 4
    assert first.baseline[2].response == "q1 2"


def test_limit_and_nothing_moved() -> None:
    assert [q.question_id for q in changed_questions(BASE, CAND, limit=1)] == ["q1"]
    assert changed_questions(BASE, BASE, limit=10) == []
