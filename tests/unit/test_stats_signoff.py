"""Issue 14: the one sign-off rule (pipeline.stats.signoff / release) on small known cases."""

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
    # Issue 14 item 2: NaN > 0 is False, which made a NaN SE read as certainty.
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
    assert float(ev.p_go) == 1.0 and float(ev.p_go_paired) == 0.0
    cand[:1] = base[:1]  # one point at worst: within the margin
    assert float(accuracy_evidence(outcomes(base, cand), 0.02, 0.05).p_go) == 0.0


def test_absent_questions_block_go_unless_allowed():
    base = np.ones((50, 4))
    asked = np.arange(50) >= 1
    cand = np.where(asked[:, None], base, NAN)
    assert float(accuracy_evidence(outcomes(base, cand, asked), 0.02, 0.05).p_go) == 1.0
    ev = accuracy_evidence(outcomes(base, cand, asked), 0.02, 0.05, max_absent=0.02)
    assert float(ev.p_go) == 0.0 and float(ev.n_absent) == 1


def test_pairing_by_question_compares_means():
    base = [[1, 1, 0, 0], [1, 1, 1, 1]]
    cand = [[1, 0, 1, 0], [1, 1, 1, 0]]
    ev = accuracy_evidence(outcomes(base, cand, by_repeat=False), 0.02, 0.05)
    assert float(ev.drop) == pytest.approx(0.125)


def test_broken_prompts_fisher_and_tarone():
    base = np.ones((40, 8))
    base[20:] = 0  # always wrong on both sides: can never break, not counted
    cand = base.copy()
    cand[0] = 0  # 8/8 -> 0/8
    found = broken_prompts(outcomes(base, cand), 0.05)
    assert found.p_question[0] == pytest.approx(1 / 12870)  # C(8,8) / C(16,8)
    # Questions 1..19 (8/8 on both) could never show a break either: K = 16 > nb.
    assert int(found.testable) == 1
    assert list(np.flatnonzero(found.flagged(0.05))) == [0]
    assert cell_verdict(outcomes(base, cand), 0.02, 0.05, 0.05)[()] == "NO-GO"


def test_release_is_go_only_when_every_cell_is_and_holm_only_for_alarms():
    go, nogo = family_pvalues(np.array([0.04, 0.04]), np.array([0.03, 0.9]), 1.0, True)
    assert list(go) == [0.04, 0.04] and list(nogo) == pytest.approx([0.06, 0.9])
    cells = family_verdicts(go, nogo, 0.05)
    assert list(cells) == ["GO", "GO"]
    table = np.array([["GO", "GO"], ["GO", "INCONCLUSIVE"], ["NO-GO", "GO"]], dtype=object)
    assert release_verdict(table).tolist() == ["GO", "UNDECIDED", "NO-GO"]


def test_holm_does_not_collect_garbage(monkeypatch):
    # Issue 14 item 10: statsmodels' multipletests ran gc.collect() on every call.
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    assert multiplicity.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert calls == []
