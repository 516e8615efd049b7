"""Monte Carlo checks of the sign-off's statistics: error rates and power over thousands of
simulated replications (seconds each on the 2-core machine), moved out of the unit tier (issue 38)
from tests/unit/test_stats_anytime.py, test_look_schedule.py and test_stats_nogo_split.py."""

import numpy as np
import pytest

from pipeline.stats.anytime import AnytimeEvidence, anytime_verdict, broken_p, look_pvalues
from pipeline.stats.breaks import broken_prompts
from pipeline.stats.look_schedule import LookSchedule
from pipeline.stats.signoff import Outcomes, accuracy_evidence, cell_verdict
from tests.helpers.draws import MARGIN, at_the_margin, copies, draw, gpqa_shaped, outcomes

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("looks", ["every", "doubling"])
@pytest.mark.parametrize("go", [True, False])
@pytest.mark.parametrize("draws", [draw, copies])
def test_a_false_verdict_stays_below_alpha_even_run_past_its_plan(go, draws, looks):
    # At the boundary of the null, over every look up to 32 repeats of an 8-look plan of 16
    # (extended 2x): independent repeats, and repeats that are copies of one answer (greedy).
    rng = np.random.default_rng(11 if go else 12)
    p_base, p_cand = at_the_margin()
    o = outcomes(draws(rng, p_base, 1500, 32), draws(rng, p_cand, 1500, 32))
    p_go, p_nogo = look_pvalues(o, MARGIN, 0.05, LookSchedule(2, 8, looks))
    assert np.mean((p_go if go else p_nogo) <= 0.05) <= 0.05


def test_a_clean_candidate_reaches_go_and_a_bad_one_no_go():
    # GPQA-shaped: a fifth uncertain, the rest nearly always right or wrong.
    rng = np.random.default_rng(5)
    p = np.concatenate([np.linspace(0.15, 0.85, 40), np.full(110, 0.98), np.full(48, 0.02)])
    base = draw(rng, p, 200, 32)
    clean, bad = draw(rng, p, 200, 32), draw(rng, np.clip(p - 0.06, 0, 1), 200, 32)
    assert (
        np.mean(look_pvalues(outcomes(base, clean), MARGIN, 0.05, LookSchedule(2, 16))[0] <= 0.05)
        > 0.95
    )
    assert (
        np.mean(look_pvalues(outcomes(base, bad), MARGIN, 0.05, LookSchedule(2, 16))[1] <= 0.05 / 8)
        > 0.95
    )


def test_a_prompt_broken_on_ten_questions_is_caught_among_eight_candidates():
    # The simulation's finding: spread over every round of 2, the broken check's share at a
    # late look (1/272) is below the sign test's floor for 10 questions (2^-10), so a release
    # of 8 caught it 19% of the time; doubling reads it whole once its pattern has settled.
    rng = np.random.default_rng(3)
    p = gpqa_shaped()
    broken = p.copy()
    broken[np.flatnonzero(p > 0.9)[::3][:10]] = 0.0
    o = outcomes(draw(rng, p, 200, 32), draw(rng, broken, 200, 32))
    caught = {}
    for looks in ("every", "doubling"):
        p_br = broken_p(o, 0.05, LookSchedule(2, 16, looks))
        ev = AnytimeEvidence(np.ones(200), np.ones(200), p_br, np.full(200, 32.0))
        caught[looks] = np.mean(anytime_verdict(ev, 0.05, 8) == "NO-GO")
    assert caught["doubling"] > 0.9 > 0.3 > caught["every"]


def test_a_drop_on_the_uncertain_questions_needs_the_last_look():
    # 5 points lost on the questions between 0.15 and 0.85 only (no question breaks): the
    # question-level SE saturates, so NO-GO at alpha / 8 is reached at the plan's end or not.
    rng = np.random.default_rng(9)
    p = gpqa_shaped()
    mid = (p > 0.15) & (p < 0.85)
    worse = np.where(mid, p * (1 - 0.05 * len(p) / p[mid].sum()), p)
    o = outcomes(draw(rng, p, 300, 32), draw(rng, worse, 300, 32))
    level = 0.05 / 8 * 0.8
    power = {looks: np.mean(look_pvalues(o, 0.02, 0.05, LookSchedule(2, 16, looks))[1] <= level)
             for looks in ("every", "doubling")}  # fmt: skip
    assert power["doubling"] > 0.85 and power["every"] < 0.4


def _at_the_boundary_on_uncertain_questions(reps: int) -> Outcomes:
    # 198 questions, a fifth uncertain; the candidate loses exactly the margin, on those only.
    from benchmarks.signoff_sim.release_sim import beta_questions, with_drop

    p = beta_questions()
    q = with_drop(p, 0.02, "uncertain")
    rng = np.random.default_rng(20261201)
    base = (rng.random((reps, 198, 8)) < p[:, None]).astype(float)
    cand = (rng.random((reps, 198, 8)) < q[:, None]).astype(float)
    return Outcomes(base, cand, np.ones((reps, 198), dtype=bool))


def test_a_candidate_at_its_no_go_boundary_is_no_go_at_most_alpha():
    # Each check at alpha, the union is not level alpha in general (with the Fisher test
    # pooling repeats it was over 5.5% here; the question-level sign test, issue 37, rarely
    # fires at the boundary); split, the two together stay under 5%.
    o = _at_the_boundary_on_uncertain_questions(3000)
    ev = accuracy_evidence(o, 0.02, 0.05)
    broken = broken_prompts(o, 0.05).p_cell
    assert np.mean((ev.p_nogo <= 0.05) | (broken <= 0.05)) <= 0.055
    assert np.mean(cell_verdict(o, 0.02, 0.05, 0.05) == "NO-GO") <= 0.05
