"""What a repeat is worth: ICC, effective answers, questions needed (``stats.dependence``)."""

import math

import numpy as np
import pytest

from pipeline.stats.dependence import icc_one_way, questions_needed, within_question
from pipeline.stats.power import VarianceComponents, repeats_to_decide


def test_copies_are_icc_one_and_worth_one_answer_per_question():
    rng = np.random.default_rng(1)
    first = (rng.random((100, 1)) < 0.6).astype(float)
    copies = np.repeat(first, 8, axis=1)
    dep = within_question(copies, copies.copy())
    assert (dep.icc, dep.icc_low, dep.icc_high) == (1.0, 1.0, 1.0)
    assert dep.identical_share == 1.0 and not dep.repeats_vary
    assert dep.answers == 800 and dep.effective == pytest.approx(100)


def test_independent_draws_of_one_probability_are_icc_near_zero():
    rng = np.random.default_rng(2)
    draws = (rng.random((400, 8)) < 0.5).astype(float)
    icc, low, high = icc_one_way(draws)
    assert low <= 0.0 <= high and abs(icc) < 0.05
    dep = within_question(draws[:200], draws[200:])
    assert dep.repeats_vary and dep.effective == pytest.approx(1600, rel=0.3)


def test_a_known_icc_is_inside_its_interval():
    # Copy the first answer with probability 0.6: the within-question correlation is 0.6^2
    # between two copies-or-not repeats... measured against many replications instead.
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        p = rng.uniform(0.2, 0.8, (150, 1))
        draws = (rng.random((150, 6)) < p).astype(float)
        true = float(np.var(p) / (np.mean(p) * (1 - np.mean(p))))
        _, low, high = icc_one_way(draws)
        hits += low <= true <= high
    assert hits / 200 >= 0.9


def test_nothing_varying_anywhere_has_no_icc():
    assert all(math.isnan(x) for x in icc_one_way(np.ones((10, 4))))


@pytest.mark.parametrize(("spread", "expected"), [(0.0, None), (0.19, 559)])
def test_questions_needed_from_the_spread_of_per_question_differences(spread, expected):
    # Greedy A/A: 3.6% of questions flip, half each way: differences -1 / 0 / +1.
    d = np.zeros(1000)
    flips = round(1000 * spread**2)
    d[: flips // 2], d[flips // 2 : flips] = -1, 1
    found = questions_needed(d, 0.02, 0.05)
    assert found == expected if expected is None else abs(found - expected) < 15


def test_repeats_cannot_decide_what_copies_hold():
    assert repeats_to_decide(0.01, VarianceComponents(0.0, 0.001, 198), 0.05, 0.8) is None
