"""Issue 14: the release rule, simulated through the report's decision functions (a small run of
benchmarks/signoff_simulation.py's conditions; the committed table has 2,000 per condition)."""

from __future__ import annotations

import pytest

from benchmarks.signoff_sim.release_sim import (
    GO,
    NO_GO,
    Condition,
    beta_questions,
    rate,
    run_condition,
)
from pipeline.stats.sequential import SequentialDesign

pytestmark = pytest.mark.slow
SEQ = SequentialDesign(24, 2, 0.05, 0.02)


def test_the_question_set_is_the_issues():
    p = beta_questions()
    assert len(p) == 198 and p.mean() == pytest.approx(0.70, abs=1e-3)
    assert (p * (1 - p)).sum() ** 0.5 / 198 == pytest.approx(0.015, abs=1e-4)


def test_eight_clean_candidates_conclude_and_a_margin_candidate_rarely_passes():
    clean = run_condition(Condition(candidates=8, design=SEQ), 300, seed=1)
    assert rate(clean.release, GO)[2] >= 0.90  # upper Wilson end
    at_margin = run_condition(Condition(drop=0.02, candidates=8, design=SEQ), 300, seed=2)
    assert rate(at_margin.release, GO)[1] <= 0.05  # lower Wilson end


def test_a_few_broken_questions_are_caught():
    broken = run_condition(Condition(drop=0.05, shape="few break"), 300, seed=3)
    assert rate(broken.first, NO_GO)[0] >= 0.8


def test_errors_on_wrong_answers_buy_no_go():
    # Without counting the candidate's errored pairs wrong, a true 3-point regression whose
    # 4.9% errors fall on its wrong answers was GO 8% of the time.
    c = Condition(drop=0.03, cand_errors=0.049, error_mode="on wrong")
    assert rate(run_condition(c, 400, seed=4).first, GO)[0] <= 0.02


def test_the_real_layout_concludes_sequentially():
    c = Condition(candidates=8, design=SEQ, baselines=4)
    assert rate(run_condition(c, 100, seed=5).release, GO)[0] >= 0.9


def test_baselines_beside_their_candidates_cost_only_their_last_candidates_repeats():
    anytime = SequentialDesign(32, 2, 0.05, 0.02, statistic="eprocess", broken_share=0.2)
    seq = run_condition(Condition(candidates=8, design=anytime, baselines=4), 40, seed=6)
    # The same runs: each of the 4 baselines at its last paired candidate's stop, not all 32.
    saved = seq.repeats - seq.beside
    assert (saved >= 0).all() and (saved <= 4 * 30).all() and saved.mean() > 4 * 8
    fixed = run_condition(Condition(candidates=8, repeats=16, baselines=4), 40, seed=6)
    assert (fixed.beside == fixed.repeats).all() and (fixed.repeats == 12 * 16).all()
