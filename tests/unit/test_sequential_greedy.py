"""At temperature 0 the anytime design plans one look and ends a cell whose repeats are copies
(issue 37): the runner's rule, the design it writes, and the report's words for it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pipeline.measuring.sequential_run import SequentialConf, copies_only, design_of, greedy, look
from pipeline.report.judge.check_numbers import UNSET
from pipeline.report.judge.verdicts import copies_note
from pipeline.stats.anytime import anytime_evidence
from pipeline.stats.dependence import questions_for_identical_answers
from pipeline.stats.look_schedule import LookSchedule
from pipeline.stats.outcomes import Outcomes
from pipeline.stats.sequential import SequentialDesign
from pipeline.stats.signoff import accuracy_evidence
from tests.helpers.check_numbers import accuracy_numbers, dependence


def rec(qid: str, repeat: int, correct: bool) -> dict:
    return {"question_id": qid, "repeat": repeat, "correct": correct, "error_kind": None}


def copies(n: int, k: int, right: set[int]) -> list[dict]:
    return [rec(f"q{i}", r, i in right) for i in range(n) for r in range(k)]


@pytest.mark.parametrize(("temperature", "top_k", "expected"), [
    (0.0, None, True), (0, None, True), (0.6, None, False), (0.6, 1, True), (1.0, 20, False),
])  # fmt: skip
def test_greedy_is_temperature_zero_or_top_k_one(temperature, top_k, expected):
    assert greedy(SimpleNamespace(temperature=temperature, top_k=top_k)) is expected


@pytest.mark.parametrize(("statistic", "is_greedy", "planned"), [
    ("eprocess", True, 1), ("eprocess", False, 16), ("group_sequential", True, 16),
])  # fmt: skip
def test_the_greedy_anytime_design_plans_one_look(statistic, is_greedy, planned):
    conf = SequentialConf(max_repeats=32, repeats_per_round=2, statistic=statistic)
    design = design_of(conf, 1, is_greedy)
    assert design.planned == planned
    assert design.n_looks == 16  # it may still look again: later looks share what is left


@pytest.mark.parametrize("planned", [0, -1, True, 1.5])
def test_planned_looks_must_be_a_positive_integer(planned):
    with pytest.raises(ValueError, match="planned_looks"):
        SequentialDesign(32, 2, statistic="eprocess", planned_looks=planned)


def test_one_planned_look_reads_the_first_round_at_nearly_all_of_alpha():
    # Two greedy starts that answer alike on 300 of 300 questions: GO at the first look with one
    # look planned; with 16 planned the first look has 0.7% of alpha and decides nothing.
    n = 300
    right = set(range(0, n, 3))
    base, cand = copies(n, 2, right), copies(n, 2, right)
    one = design_of(SequentialConf(max_repeats=32, repeats_per_round=2), 1, True)
    many = design_of(SequentialConf(max_repeats=32, repeats_per_round=2), 1, False)
    assert look(cand, base, one, 1) == "GO"
    assert look(cand, base, many, 1) is None


@pytest.mark.parametrize(("base", "cand", "expected"), [
    (copies(20, 2, {1, 2}), copies(20, 2, {1, 3}), True),  # differ between sides only
    (copies(20, 2, {1}), copies(20, 2, {1}), True),  # identical sides
    (copies(20, 2, {1}), [*copies(20, 1, {1}), rec("q5", 1, True),
                          *[rec(f"q{i}", 1, i == 1) for i in range(20) if i != 5]], False),
    (copies(20, 1, {1}), copies(20, 1, {1}), False),  # one repeat shows nothing either way
    (copies(20, 2, {1}), [], False),
])  # fmt: skip
def test_copies_only_when_no_question_varies_on_either_side(base, cand, expected):
    assert copies_only(cand, base) is expected


@pytest.mark.parametrize(("given", "says"), [
    ({"repeats_vary": False, "repeats": 2, "questions_needed": 174}, "about 174 questions can"),
    ({"repeats_vary": False, "repeats": 8, "questions_needed": None}, "more questions can"),
    ({"repeats_vary": True, "repeats": 8, "questions_needed": 174}, ""),
    ({"repeats_vary": False, "repeats": 1, "questions_needed": 174}, ""),
    ({"repeats_vary": False, "repeats": 2, "undecided_because": "errors decided it"}, ""),
    ({"repeats": 2, "dependence": UNSET}, ""),
])  # fmt: skip
def test_the_copies_note_only_where_copies_are_why(given, says):
    own = {k: given.pop(k) for k in ("repeats", "undecided_because", "dependence") if k in given}
    own.setdefault("dependence", dependence(**given))
    note = copies_note(accuracy_numbers(**own))
    assert (says in note and "more repeats cannot decide it" in note) if says else note == ""


@pytest.mark.parametrize("accuracy", [0.3, 0.625, 0.96, 1.0])
def test_questions_for_identical_answers_is_where_the_sign_off_turns_go(accuracy):
    needed = questions_for_identical_answers(accuracy, 0.02, 0.05)
    assert needed is not None

    def p_go(n: int) -> float:
        right = np.zeros((n, 1))
        right[: round(accuracy * n)] = 1.0
        o = Outcomes(right, right.copy(), np.ones(n, bool))
        return float(accuracy_evidence(o, 0.02, 0.05).p_go)

    assert p_go(needed) <= 0.05 < p_go(needed - 1)


def test_the_report_reads_a_greedy_cell_with_the_design_it_ran():
    # The look and the report share anytime_evidence; the planned looks travel in the design.
    n = 300
    right = np.zeros((n, 2))
    right[::3] = 1.0
    o = Outcomes(right, right.copy(), np.ones(n, bool))
    one = SequentialDesign(32, 2, statistic="eprocess", planned_looks=1)
    p_one = float(anytime_evidence(o, 0.02, 0.05, one.schedule).p_go)
    p_all = float(anytime_evidence(o, 0.02, 0.05, LookSchedule(2, 16)).p_go)
    assert p_one <= 0.05 < p_all
