"""release_sim on other question sets: the live-measured ones, the issue's set unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.signoff_sim.release_sim import QUESTIONS, Condition, beta_questions, run_condition

LIVE_SETS = [(180, 0.820, 0.0242, 0.29), (200, 0.668, 0.0200, 0.64), (48, 0.964, 0.0172, 0.58)]


@pytest.mark.parametrize(("n", "mean", "sd", "icc"), LIVE_SETS)
def test_beta_questions_have_the_measured_shape(n: int, mean: float, sd: float, icc: float) -> None:
    p = beta_questions(n, mean, sd)
    assert (len(p), p.mean()) == (n, pytest.approx(mean, abs=0.01))
    assert np.sqrt(np.sum(p * (1 - p))) / n == pytest.approx(sd, rel=0.05)
    assert p.var() / (p.mean() * (1 - p.mean())) == pytest.approx(icc, abs=0.03)


def test_the_issues_set_keeps_its_streams_and_another_set_draws_its_own() -> None:
    default = run_condition(Condition(drop=0.02), 30, 7)
    named = run_condition(Condition(drop=0.02, questions=QUESTIONS), 30, 7)
    other = run_condition(Condition(drop=0.02, questions=LIVE_SETS[2][:3]), 30, 7)
    np.testing.assert_array_equal(default.first, named.first)
    assert other.first.shape == (30,) and other.repeats.shape == (30,)
