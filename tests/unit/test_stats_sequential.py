import numpy as np
import pytest
from scipy import stats

from pipeline.stats.sequential import (
    SequentialDesign,
    boundaries,
    decide,
    decide_reference,
    level_at,
    spent_alpha,
)


def test_obrien_fleming_boundaries_match_gsdesign():
    # gsDesign, sfLDOF, one-sided alpha 0.025, five equally spaced looks
    design = SequentialDesign(5, 1, alpha=0.025)
    assert boundaries(design) == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=5e-4)


def test_one_look_is_the_fixed_design():
    design = SequentialDesign(8, 8, alpha=0.05)
    assert boundaries(design) == pytest.approx([stats.norm.isf(0.05)])
    assert level_at(design, 1) == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("t", "spending", "expected"),
    [
        (1.0, "obrien_fleming", 0.05),
        (0.0, "obrien_fleming", 0.0),
        (0.25, "obrien_fleming", 2 * stats.norm.sf(stats.norm.isf(0.025) / 0.5)),
        (1.0, "pocock", 0.05),
        (0.5, "pocock", 0.05 * np.log(1 + (np.e - 1) * 0.5)),
    ],
)
def test_spent_alpha(t, spending, expected):
    assert spent_alpha(t, 0.05, spending) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_repeats": 16, "repeats_per_round": 3}, "divide"),
        ({"max_repeats": 2, "repeats_per_round": 4}, "repeats_per_round"),
        ({"max_repeats": 16, "repeats_per_round": 2, "alpha": 0.6}, "alpha"),
        ({"max_repeats": 16, "repeats_per_round": 2, "margin": -1}, "margin"),
        ({"max_repeats": 16, "repeats_per_round": 2, "spending": "haybittle"}, "spending"),
    ],
)
def test_design_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SequentialDesign(**kwargs)


def _diffs(rng, n, k, p_worse):
    # per (question, repeat): -1 with probability p_worse, +1 with 0.05, else 0
    u = rng.random((n, k))
    return np.where(u < p_worse, -1.0, np.where(u > 0.95, 1.0, 0.0))


def test_decide_stops_only_on_clear_evidence():
    design = SequentialDesign(16, 2, alpha=0.05, margin=0.02)
    rng = np.random.default_rng(12)
    same = _diffs(rng, 198, 16, 0.05)
    worse = _diffs(rng, 198, 16, 0.25)
    assert decide(design, 1, same[:, :2]) is None  # 2 repeats: boundary z = 5.4
    assert decide(design, 8, same) == "GO"
    assert decide(design, 2, worse[:, :4]) == "NO-GO"
    as_dict = {f"q{i}": list(row) for i, row in enumerate(same)}
    assert decide(design, 8, as_dict) == decide(design, 8, same)


def test_decide_at_a_look_uses_that_looks_level():
    design = SequentialDesign(16, 2, alpha=0.05, margin=0.02)
    # 100 questions, diffs with mean -0.005 and sd 0.04: t for GO = (0.02 - 0.005) / 0.004 = 3.75
    diffs = np.tile([-0.045, 0.035], 50)[:, None] * np.ones((100, 2))
    t_go = (0.02 + diffs.mean()) / (diffs[:, 0].std(ddof=1) / 10)
    p_go = stats.t.sf(t_go, 99)
    looks = [j for j in range(1, 9) if p_go <= level_at(design, j)]
    assert decide(design, looks[0], diffs) == "GO"
    assert decide(design, looks[0] - 1, diffs) is None


def test_decide_reference():
    design = SequentialDesign(8, 2, alpha=0.05, margin=0.02)
    # accuracy 0.5; within-question SE sqrt(10 * 0.5 / 2) / 200 = 0.0079
    scores = np.vstack([np.tile([[1.0, 1.0], [0.0, 0.0]], (95, 1)), np.tile([1.0, 0.0], (10, 1))])
    assert decide_reference(design, 4, scores, reference=0.5) == "GO"
    assert decide_reference(design, 4, scores, reference=0.60) == "NO-GO"
    assert decide_reference(design, 1, scores, reference=0.5, reference_se=0.05) is None


def test_decide_refuses_a_bad_look_or_shape():
    design = SequentialDesign(16, 2)
    with pytest.raises(ValueError, match="look"):
        decide(design, 9, np.zeros((10, 2)))
    with pytest.raises(ValueError, match="shape"):
        decide(design, 1, np.zeros(10))
