"""The questions whose correctness moved most, and what samples say of them, from literal lines."""

from __future__ import annotations

import pytest

from pipeline.report.write.changed_questions import (
    Answer,
    Question,
    changed_questions,
    option_index,
    question_of,
)


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


SHUFFLED = Question("Which?", ("right", "w1", "w2", "w3"), gold="right", permuted=True)
FIXED = Question("Capital?", ("Lyon", "Paris"), gold="Paris")


def answer(perm: tuple[int, ...] | None = None) -> Answer:
    return Answer(repeat=0, extracted=None, correct=False, response=None, permutation=perm)


@pytest.mark.parametrize(
    ("question", "letter", "perm", "index"),
    [
        (FIXED, "B", None, 1),
        (FIXED, "b", None, 1),
        (FIXED, "C", None, None),  # beyond the options
        (SHUFFLED, "A", (2, 0, 3, 1), 2),  # position A shows option 2 in this repeat
        (SHUFFLED, "D", (2, 0, 3, 1), 1),
        (SHUFFLED, "A", None, None),  # shuffled, but the line kept no permutation
        (SHUFFLED, "Z", (0, 1, 2, 3), None),
        (SHUFFLED, "AB", (0, 1, 2, 3), None),
        (SHUFFLED, None, (0, 1, 2, 3), None),
        (Question("2+2?", gold="4"), "4", None, None),  # no options: a number names nothing
        (None, "A", None, None),  # old samples: no question
    ],
)
def test_option_index(question, letter, perm, index) -> None:
    assert option_index(question, letter, answer(perm)) == index


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ({"text": "Q?"}, Question("Q?")),
        ({"text": "Which?", "options": ["right", "w1", "w2", "w3"], "gold": "right",
          "permuted": True}, SHUFFLED),
        ({"text": "Q?", "options": "not a list", "gold": 4}, Question("Q?", gold="4")),
        ({"options": ["a"]}, None),  # no text: nothing to show
        ("Q?", None),
    ],
)  # fmt: skip
def test_question_of_reads_the_first_line_that_has_one(written, read) -> None:
    records = [{"question_id": "q", "repeat": 1}, {"question_id": "q", "repeat": 0,
               "question": written}]  # fmt: skip
    assert question_of(records) == read


def lines(question: dict | None, answers: list[str], gold: str | list[str], oks: list[bool]):
    golds = gold if isinstance(gold, list) else [gold] * len(answers)
    out = {}
    for r, (said, ok) in enumerate(zip(answers, oks, strict=True)):
        record = {
            "question_id": "q",
            "repeat": r,
            "correct": ok,
            "answer": golds[r],
            "extracted": said,
            "permutation": [r % 4, (r + 1) % 4, (r + 2) % 4, (r + 3) % 4],
        }
        if question is not None and r == 0:
            record["question"] = question
        out[("q", r)] = record
    return out  # fmt: skip


@pytest.mark.parametrize(
    ("question", "gold", "shown"),
    [
        (None, "B", "B"),  # old samples: the letter, as before
        (None, ["A", "D"], "per repeat"),
        ({"text": "Capital?", "options": ["Lyon", "Paris"], "gold": "Paris"}, "B", "B) Paris"),
        ({"text": "Which?", "options": ["right", "w1"], "gold": "right", "permuted": True},
         ["A", "D"], "right"),  # shuffled: the text, the letters beside each repeat
        ({"text": "2+2?", "gold": "4"}, "4", "4"),
    ],
)  # fmt: skip
def test_gold_is_the_text_with_its_letter_where_that_is_fixed(question, gold, shown) -> None:
    base = lines(question, ["B", "A"], gold, [True, True])
    cand = lines(None, ["C", "C"], gold, [False, False])  # the question read from either side
    (found,) = changed_questions(base, cand, limit=5)
    assert found.gold == shown
    assert found.question == (question_of([{"question": question}]) if question else None)
    assert found.candidate[1].permutation == (1, 2, 3, 0)
