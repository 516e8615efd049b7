import numpy as np
import pytest
from scipy import stats

from pipeline.stats.sequential import (
    SequentialDesign,
    boundaries,
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


def test_a_look_outside_the_design_is_refused():
    with pytest.raises(ValueError, match="look"):
        level_at(SequentialDesign(16, 2), 9)
