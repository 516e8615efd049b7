"""Asking only the still-informative questions (benchmarks/signoff_sim/informative.py)."""

import numpy as np
import pytest

from benchmarks.signoff_sim.informative import Plan, ask_probability, weighted_pairs


@pytest.mark.parametrize(("plan", "expected"), [
    (Plan("all"), [1.0, 1.0]), (Plan("weighted", 0.25), [0.25, 1.0]), (Plan("skip"), [0.0, 1.0]),
])  # fmt: skip
def test_alike_questions_are_asked_less_after_the_warm_up(plan, expected):
    base = np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    cand = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    assert ask_probability(base, cand, 1, plan).tolist() == [1.0, 1.0]  # warm-up: all asked
    assert ask_probability(base, cand, 3, plan).tolist() == expected


def test_weighted_pairs_keep_each_questions_mean():
    # Horvitz-Thompson: the weighted difference's mean is the true one, asked or not.
    rng = np.random.default_rng(0)
    p_base, p_cand = np.array([0.99, 0.5]), np.array([0.95, 0.5])
    base = (rng.random((20000, 2, 12)) < p_base[:, None]).astype(float)
    cand = (rng.random((20000, 2, 12)) < p_cand[:, None]).astype(float)
    x, asked = weighted_pairs(base, cand, Plan("weighted", 0.25), rng)
    assert asked[..., 0, 2:].mean() < 0.5  # the near-certain question is mostly not asked
    assert x[..., 0, 2:].mean() == pytest.approx(-0.04, abs=0.004)
    assert x[..., 1, 2:].mean() == pytest.approx(0.0, abs=0.004)
