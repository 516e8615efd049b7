"""The one sign-off rule (pipeline.stats.signoff / release) on small known cases."""

import gc

import numpy as np
import pytest

from pipeline.stats import multiplicity
from pipeline.stats.noninferiority import margin_test, verdict
from pipeline.stats.release import family_pvalues, family_verdicts, release_verdict
from pipeline.stats.signoff import Outcomes, accuracy_evidence, broken_prompts, cell_verdict

NAN = np.nan


def outcomes(base, cand, asked=None, by_repeat=True):
    base, cand = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
    asked = np.ones(base.shape[0], dtype=bool) if asked is None else np.asarray(asked)
    return Outcomes(base, cand, asked, by_repeat)


@pytest.mark.parametrize(("se", "df"), [(NAN, 5), (np.inf, 5), (0.01, 0)])
def test_a_non_finite_se_or_no_df_decides_nothing(se, df):
    # NaN > 0 is False, which made a NaN SE read as certainty.
    test = margin_test(0.0, se, df, 0.02, 0.05)
    assert np.isnan(test.p_go) and np.isnan(test.p_nogo)
    assert verdict(test) == "INCONCLUSIVE"


def test_errored_requests_leave_the_pair_on_both_sides():
    base = [[1, 1, NAN, 0], [1, 0, 1, 1]]
    cand = [[NAN, 1, 0, 0], [1, 0, 1, NAN]]
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    # pairs: q0 (r1: 0, r3: 0), q1 (r0..r2: 0): no difference at all
    assert float(ev.drop) == 0 and float(ev.n_paired) == 2 and float(ev.n_unanswered) == 0


def test_questions_without_an_answered_pair_are_taken_at_their_worst():
    n = 100
    base = np.ones((n, 4))
    cand = base.copy()
    cand[:3] = NAN  # three always-right questions with no candidate answer
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.worst_shift) == pytest.approx(0.03)  # could all be wrong: 3 points
    # Paired alone (copies: each question one answer, SE floored at 1 / n) it would be GO.
    assert float(ev.p_go) > 0.5 and float(ev.p_go_paired) < 0.05
    assert float(ev.go_bound) > 0.03  # the errored ones counted wrong: above the margin


def test_one_lost_question_in_a_thousand_still_allows_go():
    base = np.ones((1000, 4))
    cand = base.copy()
    cand[:1] = NAN  # 0.1 point at worst: within the margin
    assert float(accuracy_evidence(outcomes(base, cand), 0.02, 0.05).p_go) < 1e-6


def test_absent_questions_block_go_unless_allowed():
    base = np.ones((50, 4))
    base[1, 0] = 0  # repeats vary: draws, not greedy copies
    asked = np.arange(50) >= 1
    cand = np.where(asked[:, None], base, NAN)
    assert float(accuracy_evidence(outcomes(base, cand, asked), 0.02, 0.05).p_go) == 1.0
    ev = accuracy_evidence(outcomes(base, cand, asked), 0.02, 0.05, max_absent=0.02)
    assert float(ev.p_go) < 0.05 and float(ev.n_absent) == 1


def test_pairing_by_question_compares_means():
    base = [[1, 1, 0, 0], [1, 1, 1, 1]]
    cand = [[1, 0, 1, 0], [1, 1, 1, 0]]
    ev = accuracy_evidence(outcomes(base, cand, by_repeat=False), 0.02, 0.05)
    assert float(ev.drop) == pytest.approx(0.125)


def test_broken_prompts_is_a_sign_test_over_questions():
    base = np.ones((40, 8))
    base[20:] = 0  # always wrong on both sides
    base[39, 0] = 1  # one question varies: the repeats are draws, not greedy copies
    cand = base.copy()
    cand[0] = 0  # 8/8 -> 0/8: one question, not 8 observations
    found = broken_prompts(outcomes(base, cand), 0.05)
    assert float(found.p_cell) == pytest.approx(0.5) and int(found.worse) == 1
    cand[:10] = 0  # ten questions break, none the other way: 2^-10
    found = broken_prompts(outcomes(base, cand), 0.05)
    assert float(found.p_cell) == pytest.approx(2.0**-10)
    assert list(np.flatnonzero(found.flagged(0.01))) == list(range(10))
    assert cell_verdict(outcomes(base, cand), 0.02, 0.05, 0.05)[()] == "NO-GO"
    cand[30:33] = 1  # three questions the other way: P(Bin(13, 1/2) >= 10)
    found = broken_prompts(outcomes(base, cand), 0.05)
    assert float(found.p_cell) == pytest.approx((286 + 78 + 13 + 1) / 2**13)


def test_broken_prompts_keep_their_level_when_repeats_are_sticky():
    # The case: a clean candidate, each repeat a copy of the first with probability 0.8.
    # Fisher pooling the repeats flagged it 99.8% of the time at fixed 8.
    rng = np.random.default_rng(9)
    p = np.concatenate([np.linspace(0.15, 0.85, 40), np.full(110, 0.98), np.full(48, 0.02)])

    def sticky():
        first = rng.random((2000, len(p), 1)) < p[:, None]
        fresh = rng.random((2000, len(p), 8)) < p[:, None]
        return np.where(rng.random(fresh.shape) < 0.8, first, fresh).astype(float)

    found = broken_prompts(outcomes(sticky(), sticky()), 0.01)
    assert np.mean(found.p_cell <= 0.01) <= 0.01 + 3 * np.sqrt(0.01 * 0.99 / 2000)


def test_release_is_go_only_when_every_cell_is_and_holm_only_for_alarms():
    go, nogo = family_pvalues(np.array([0.04, 0.04]), np.array([0.03, 0.9]), 1.0, True)
    assert list(go) == [0.04, 0.04] and list(nogo) == pytest.approx([0.06, 0.9])
    cells = family_verdicts(go, nogo, 0.05)
    assert list(cells) == ["GO", "GO"]
    table = np.array([["GO", "GO"], ["GO", "INCONCLUSIVE"], ["NO-GO", "GO"]], dtype=object)
    assert release_verdict(table).tolist() == ["GO", "UNDECIDED", "NO-GO"]


def test_holm_does_not_collect_garbage(monkeypatch):
    # statsmodels' multipletests ran gc.collect() on every call.
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    assert multiplicity.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert calls == []


def _errors_on_wrong(n=198, k=8, seed=3):
    # A candidate 3 points worse whose 4.9% errored requests fall on answers it got wrong.
    rng = np.random.default_rng(seed)
    p = np.linspace(0.3, 0.99, n)[:, None]
    base = (rng.random((n, k)) < p).astype(float)
    cand = (rng.random((n, k)) < p - 0.03).astype(float)
    wrong = np.argwhere(cand == 0)
    hit = wrong[rng.random(len(wrong)) < 0.049 / (1 - cand.mean())]
    cand[hit[:, 0], hit[:, 1]] = NAN
    return base, cand


def test_go_must_hold_with_the_candidates_lost_pairs_counted_wrong():
    # Errors on the answers it would have got wrong make the answered pairs look better.
    base, cand = _errors_on_wrong()
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.n_lost) > 0.02 * cand.size
    assert float(ev.p_go_answered) <= 0.05  # answered pairs alone: GO
    assert float(ev.p_go) > 0.05  # counted wrong, the drop may be past the margin: not GO
    assert float(ev.go_bound) > 0.02 >= float(ev.nogo_bound)


def test_no_go_must_hold_with_the_lost_pairs_counted_right():
    base = np.ones((200, 4))
    cand = base.copy()
    cand[:12] = 0  # 6 points worse on answered pairs
    cand[12:40, :2] = NAN  # 28 questions x 2 repeats lost: counted right they could save it
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.p_nogo_answered) <= 0.05 and float(ev.p_nogo) <= 0.05
    cand[:12, :3] = NAN  # lost where it was wrong: counted right, 1.5 points only
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.p_nogo_answered) <= 0.05 < float(ev.p_nogo)


def test_errors_the_baseline_shares_are_left_out():
    base, cand = _errors_on_wrong()
    base = np.where(np.isnan(cand), NAN, base)  # both lost the same requests
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.n_lost) == 0 and float(ev.p_go) == float(ev.p_go_answered)


def test_a_repeat_not_run_yet_is_not_an_error():
    base = np.ones((100, 8))
    cand = np.full((100, 8), NAN)
    cand[:, :2] = 1  # a sequential candidate after its first round
    o = Outcomes(base, cand, np.ones(100, dtype=bool), True, np.zeros((100, 8), dtype=bool))
    assert float(accuracy_evidence(o, 0.02, 0.05).n_lost) == 0


@pytest.mark.parametrize("n", [2, 3])
def test_identical_pairs_on_a_few_questions_are_not_certainty(n):
    base = np.ones((n, 8))
    ev = accuracy_evidence(outcomes(base, base.copy()), 0.02, 0.05)
    assert float(ev.se) > 0 and float(ev.p_go) > 0.05
    assert cell_verdict(outcomes(base, base.copy()), 0.02, 0.05, 0.05)[()] == "INCONCLUSIVE"


def test_two_questions_alike_are_no_certain_no_go():
    base = np.ones((2, 8))
    worse = base.copy()
    worse[:, :2] = 0  # 25 points worse on every question, every question alike
    assert cell_verdict(outcomes(base, worse), 0.02, 0.05, 0.05)[()] == "INCONCLUSIVE"


def test_identical_pairs_on_many_questions_still_go():
    base = np.ones((198, 8))
    assert cell_verdict(outcomes(base, base.copy()), 0.02, 0.05, 0.05)[()] == "GO"


def test_greedy_copies_of_a_net_zero_change_break_no_prompt():
    # Temperature 0: every repeat is a copy; 3 questions flip right -> wrong, 3 wrong -> right.
    base = np.zeros((60, 8))
    base[:30] = 1
    cand = base.copy()
    cand[:3], cand[30:33] = 0, 1
    found = broken_prompts(outcomes(base, cand), 0.05)
    assert not bool(found.repeats_vary) and float(found.p_cell) >= 0.05


def test_an_ok_cell_with_a_fifth_of_its_requests_errored_is_not_go():
    rng = np.random.default_rng(5)
    p = np.linspace(0.3, 0.99, 198)[:, None]
    base = (rng.random((198, 8)) < p).astype(float)
    cand = base.copy()  # the same answers where it answered
    cand[rng.random(cand.shape) < 0.21] = NAN
    ev = accuracy_evidence(outcomes(base, cand), 0.02, 0.05)
    assert float(ev.p_go_answered) <= 0.05 < float(ev.p_go)


def test_the_null_variance_corrects_a_small_near_certain_set():
    # 48 questions near 0.96, the candidate exactly at the margin: the Wald-type SE is too
    # small in the replications where the candidate lost few answers (false GO 6.3% at 5%).
    from benchmarks.signoff_sim.release_sim import beta_questions, with_drop

    p = beta_questions(48, 0.964, 0.0172)
    q = with_drop(p, 0.02, "diffuse")
    rng = np.random.default_rng(11)
    base = (rng.random((10000, 48, 8)) < p[:, None]).astype(float)
    cand = (rng.random((10000, 48, 8)) < q[:, None]).astype(float)
    ev = accuracy_evidence(Outcomes(base, cand, np.ones((10000, 48), dtype=bool)), 0.02, 0.05)
    assert np.mean(ev.p_go_paired <= 0.05) > 0.055  # the plain SE: too many false GO
    assert np.mean(ev.p_go <= 0.05) < 0.05
