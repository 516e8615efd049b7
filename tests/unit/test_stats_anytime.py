"""The anytime-valid design: betting e-processes on the paired difference (``stats.anytime``)."""

import numpy as np
import pytest

from pipeline.stats.anytime import (
    AnytimeEvidence,
    anytime_evidence,
    anytime_verdict,
    bet_outcomes,
    broken_over_looks,
    eprocess_p,
    log_wealth,
    look_repeats,
    look_share,
)
from pipeline.stats.breaks import broken_prompts
from pipeline.stats.outcomes import Outcomes

MARGIN = 0.02


def draw(rng, p, reps, k):
    return (rng.random((reps, len(p), k)) < p[:, None]).astype(float)


def outcomes(base, cand):
    return Outcomes(base, cand, np.ones(cand.shape[:-1], dtype=bool), True)


def at_the_margin(n=60):
    """Questions on which the candidate is exactly ``MARGIN`` worse (the nulls' boundary)."""
    p = np.linspace(0.1, 0.95, n)
    return p, p - MARGIN


def test_wealth_is_causal_a_prefix_is_the_looks_own():
    # A look sees the first k repeats only: the full run's first k values must be its values.
    rng = np.random.default_rng(3)
    p = np.linspace(0.05, 0.95, 40)
    o = outcomes(draw(rng, p, 5, 12), draw(rng, p, 5, 12))
    for go in (True, False):
        full = log_wealth(bet_outcomes(o, MARGIN, go), MARGIN, go)
        for k in (1, 4, 7):
            part = outcomes(o.base[..., :k], o.cand[..., :k])
            head = log_wealth(bet_outcomes(part, MARGIN, go), MARGIN, go)
            np.testing.assert_allclose(head, full[..., :k])


@pytest.mark.parametrize("go", [True, False])
def test_a_false_verdict_stays_below_alpha_even_run_four_times_as_long(go):
    # Ville's inequality over every repeat up to 64 (a 16-repeat plan extended 4x), at the
    # boundary of the null: the rate must be at most alpha (it is about half of it).
    rng = np.random.default_rng(11 if go else 12)
    p_base, p_cand = at_the_margin()
    o = outcomes(draw(rng, p_base, 3000, 64), draw(rng, p_cand, 3000, 64))
    p = eprocess_p(o, MARGIN, go)
    assert np.mean(p <= 0.05) <= 0.05


def test_a_clean_candidate_reaches_go_and_a_bad_one_no_go():
    # GPQA-shaped: a fifth uncertain, the rest nearly always right or wrong.
    rng = np.random.default_rng(5)
    p = np.concatenate([np.linspace(0.15, 0.85, 40), np.full(110, 0.98), np.full(48, 0.02)])
    base = draw(rng, p, 200, 32)
    clean, bad = draw(rng, p, 200, 32), draw(rng, np.clip(p - 0.06, 0, 1), 200, 32)
    assert np.mean(eprocess_p(outcomes(base, clean), MARGIN, True) <= 0.05) > 0.95
    assert np.mean(eprocess_p(outcomes(base, bad), MARGIN, False) <= 0.05 / 8) > 0.95


def test_running_max_keeps_a_verdict_once_reached():
    # Wealth after a crossing may fall; the p-value (1 / running max) never rises again.
    rng = np.random.default_rng(8)
    p = np.linspace(0.2, 0.9, 100)
    o = outcomes(draw(rng, p, 50, 20), draw(rng, p, 50, 20))
    ps = [eprocess_p(outcomes(o.base[..., :k], o.cand[..., :k]), MARGIN, True) for k in
          range(1, 21)]  # fmt: skip
    assert (np.diff(np.stack(ps), axis=0) <= 1e-12).all()


@pytest.mark.parametrize(("go", "value"), [(True, 0.0), (False, 1.0)])
def test_lost_pairs_count_wrong_for_go_and_right_for_no_go(go, value):
    base = np.ones((4, 3))
    cand = np.array([[1.0, np.nan, 1.0]] * 4)
    o = Outcomes(base, cand, np.ones(4, dtype=bool), True)
    y = bet_outcomes(o, MARGIN, go)
    x = value - 1.0
    assert y[0, 1] == pytest.approx(x + MARGIN if go else -MARGIN - x)


def test_not_yet_run_repeats_leave_the_wealth_alone():
    base = np.ones((3, 4))
    cand = np.array([[1.0, 1.0, np.nan, np.nan]] * 3)
    errored = np.zeros(cand.shape, dtype=bool)  # later rounds not run, not errors
    o = Outcomes(base, cand, np.ones(3, dtype=bool), True, errored)
    w = log_wealth(bet_outcomes(o, MARGIN, True), MARGIN, True)
    assert w[1] > 0 and w[1] == w[2] == w[3]


def test_pairing_by_question_gives_no_verdict():
    o = Outcomes(np.ones((3, 4)), np.ones((3, 2)), np.ones(3, dtype=bool), False)
    assert np.isnan(eprocess_p(o, MARGIN, True))


@pytest.mark.parametrize(("answered", "per_round", "expected"), [
    (0, 2, []), (2, 2, [2]), (6, 2, [2, 4, 6]), (5, 2, [2, 4, 5]), (3, 4, [3]),
])  # fmt: skip
def test_look_repeats(answered, per_round, expected):
    assert look_repeats(answered, per_round) == expected


def test_broken_check_shares_sum_below_alpha_and_match_a_running_minimum():
    assert sum(look_share(j) for j in range(1, 10_000)) < 1
    rng = np.random.default_rng(2)
    p = np.concatenate([np.full(5, 0.97), np.linspace(0.1, 0.9, 30)])
    cand_p = p.copy()
    cand_p[0] = 0.0  # one broken prompt
    o = outcomes(draw(rng, p, 20, 8), draw(rng, cand_p, 20, 8))
    running = np.ones(20)
    for j, k in enumerate([2, 4, 6, 8], start=1):
        part = outcomes(o.base[..., :k], o.cand[..., :k])
        running = np.minimum(running, broken_prompts(part, 0.05 * look_share(j)).p_cell
                             / look_share(j))  # fmt: skip
    np.testing.assert_allclose(broken_over_looks(o, 0.05, [2, 4, 6, 8]), np.minimum(running, 1))


@pytest.mark.parametrize(("p_go", "p_nogo", "p_broken", "share", "expected"), [
    (0.04, 1.0, 1.0, 0.2, "GO"), (0.06, 1.0, 1.0, 0.2, "INCONCLUSIVE"),
    # alpha / 8 = 0.00625, split: the mean test 0.005, the broken check 0.00125
    (1.0, 0.0049, 1.0, 0.2, "NO-GO"), (1.0, 0.0051, 1.0, 0.2, "INCONCLUSIVE"),
    (0.01, 1.0, 0.0012, 0.2, "NO-GO"), (0.01, 1.0, 0.0013, 0.2, "GO"),
    (0.01, np.nan, np.nan, 0.2, "GO"),
    # a cell written before the split: each check at the family's full share, as it stopped
    (1.0, 0.006, 1.0, None, "NO-GO"), (1.0, 0.007, 1.0, None, "INCONCLUSIVE"),
    (0.01, 1.0, 0.006, None, "NO-GO"),
])  # fmt: skip
def test_no_go_is_read_at_the_familys_share_go_at_alpha(p_go, p_nogo, p_broken, share, expected):
    ev = AnytimeEvidence(*(np.asarray(x) for x in (p_go, p_nogo, p_broken, 4.0)))
    assert anytime_verdict(ev, 0.05, 8, share)[()] == expected


def test_questions_never_asked_block_go():
    base = np.ones((100, 8))
    cand = base.copy()
    asked = np.ones(100, dtype=bool)
    asked[:10] = False
    cand[:10] = np.nan
    o = Outcomes(base, cand, asked, True, np.zeros(cand.shape, dtype=bool))
    assert anytime_evidence(o, MARGIN, 0.05, 2).p_go == 1.0
    assert anytime_evidence(o, MARGIN, 0.05, 2, max_absent=0.1).p_go < 0.05
