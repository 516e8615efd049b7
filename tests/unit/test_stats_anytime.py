"""The anytime-valid design: the question-level check at every look, alpha spent over looks."""

import numpy as np
import pytest

from pipeline.stats.anytime import (
    AnytimeEvidence,
    LookSchedule,
    anytime_evidence,
    anytime_verdict,
    broken_over_looks,
    look_pvalues,
    look_repeats,
    look_share,
    look_weight,
)
from pipeline.stats.breaks import broken_prompts
from pipeline.stats.outcomes import Outcomes
from tests.helpers.draws import MARGIN, copies, draw, outcomes


def test_look_weights_sum_to_at_most_one_over_every_look_planned_or_not():
    for planned in (1, 4, 16):
        total = sum(look_weight(j, planned) for j in range(1, 20_000))
        assert total <= 1 + 1e-12
        assert sum(look_weight(j, planned) for j in range(1, planned + 1)) == pytest.approx(0.9)
    assert look_weight(16, 16) > look_weight(1, 16)  # later looks have more repeats


def test_copies_are_one_observation_per_question():
    # The same answers copied 8 times carry what one repeat carries: every look reads the same
    # question means, so the p-value is the first look's, only read at a smaller share.
    rng = np.random.default_rng(4)
    p = np.linspace(0.05, 0.95, 100)
    base, cand = copies(rng, p, 1, 8), copies(rng, p, 1, 8)
    once, eight = (look_pvalues(outcomes(base[..., :k], cand[..., :k]), MARGIN, 0.05,
                                LookSchedule(k, 1)) for k in (1, 8))  # fmt: skip
    np.testing.assert_allclose(once, eight)


def test_running_minimum_keeps_a_verdict_once_reached():
    rng = np.random.default_rng(8)
    p = np.linspace(0.2, 0.9, 100)
    o = outcomes(draw(rng, p, 50, 20), draw(rng, p, 50, 20))
    ps = [look_pvalues(outcomes(o.base[..., :k], o.cand[..., :k]), MARGIN, 0.05,
                       LookSchedule(2, 10))[0] for k in range(2, 21, 2)]  # fmt: skip
    assert (np.diff(np.stack(ps), axis=0) <= 1e-12).all()


def test_lost_pairs_count_wrong_for_go_and_right_for_no_go():
    rng = np.random.default_rng(6)
    p = np.linspace(0.3, 0.9, 80)
    base = draw(rng, p, 1, 8)[0]
    cand = base.copy()
    lost = cand.copy()
    lost[:8, :4] = np.nan  # the candidate's requests errored on 8 questions
    answered = look_pvalues(outcomes(base, cand), MARGIN, 0.05, LookSchedule(2, 4))
    errored = look_pvalues(outcomes(base, lost), MARGIN, 0.05, LookSchedule(2, 4))
    assert errored[0] > answered[0]


def test_pairing_by_question_gives_no_verdict():
    o = Outcomes(np.ones((3, 4)), np.ones((3, 2)), np.ones(3, dtype=bool), False)
    assert np.isnan(look_pvalues(o, MARGIN, 0.05, LookSchedule(2, 2))[0])


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
    base = draw(np.random.default_rng(1), np.full(100, 0.97), 1, 8)[0]
    cand = base.copy()
    asked = np.ones(100, dtype=bool)
    asked[:10] = False
    cand[:10] = np.nan
    o = Outcomes(base, cand, asked, True, np.zeros(cand.shape, dtype=bool))
    assert anytime_evidence(o, MARGIN, 0.05, LookSchedule(2, 4)).p_go == 1.0
    assert anytime_evidence(o, MARGIN, 0.05, LookSchedule(2, 4), max_absent=0.1).p_go < 0.05
