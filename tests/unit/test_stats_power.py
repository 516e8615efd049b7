import math

import numpy as np
import pytest

from benchmarks.signoff_sim.threshold import (
    trtllm_band,
    trtllm_passes,
    trtllm_samples_for_theta,
    trtllm_theta,
)
from pipeline.stats.power import (
    VarianceComponents,
    detectable_distance,
    extra_repeats,
    repeats_to_decide,
    se_at,
    variance_components,
)


@pytest.mark.parametrize(
    ("diffs", "within", "between"),
    [
        ([[1, 1], [0, 0], [-1, -1]], 0.0, 1.0),  # all spread is between questions
        ([[1, -1], [1, -1]], 2.0, 0.0),  # all within; 0 - 2/2 floored at 0
        ([[1], [0], [-1]], 1.0, 0.0),  # one repeat: everything counted as within
        # means 0.5, 0, 1 (variance 0.25); within 0.5, 0, 0 -> 1/6; minus mean(1/6 / k)
        ([[1, 0, np.nan], [0, 0, 0], [1, 1, 1]], 1 / 6, 0.25 - (1 / 6) * (1 / 2 + 2 / 3) / 3),
    ],
)
def test_variance_components_by_hand(diffs, within, between):
    out = variance_components(np.array(diffs, dtype=float))
    assert out.within == pytest.approx(within)
    assert out.between == pytest.approx(max(0.0, between))


def test_se_at_and_detectable_distance():
    comp = VarianceComponents(within=0.1, between=0.002, n_questions=200)
    assert se_at(comp, 4) == pytest.approx(math.sqrt((0.002 + 0.025) / 200))
    # (z_0.95 + z_0.8) * 0.01
    assert detectable_distance(0.01, 0.05, 0.8) == pytest.approx(0.024865, abs=1e-6)


@pytest.mark.parametrize(
    ("distance", "within", "between", "expected"),
    [
        # target var 200 * (0.02 / 2.48647)^2 = 0.012939 -> ceil(0.1 / 0.012939) = 8
        (0.02, 0.1, 0.0, 8),
        (0.02, 0.1, 0.005, 13),  # room 0.007939 -> ceil(12.6)
        (0.02, 0.1, 0.02, None),  # the between-question part alone is too large
        (0.0, 0.1, 0.0, None),
        (0.05, 0.0, 0.0, 1),
    ],
)
def test_repeats_to_decide_by_hand(distance, within, between, expected):
    comp = VarianceComponents(within=within, between=between, n_questions=200)
    assert repeats_to_decide(distance, comp, 0.05, 0.8) == expected


def test_extra_repeats_counts_from_current():
    rng = np.random.default_rng(8)
    diffs = rng.integers(-1, 2, size=(200, 4)).astype(float)
    comp = variance_components(diffs)
    needed = repeats_to_decide(0.01, comp, 0.05, 0.8)
    assert needed is not None and needed > 4
    assert extra_repeats(0.01, diffs, 4, 0.05) == needed - 4
    assert extra_repeats(0.5, diffs, 4, 0.05) == 1  # already enough: at least one more


@pytest.mark.parametrize(
    ("n", "band", "theta"),
    [(198, 0.0827, 0.1250), (4096, 0.0182, 0.0275), (1319, 0.0320, 0.0484)],
)
def test_trtllm_band_matches_the_anchor_table(n, band, theta):
    assert trtllm_band(n) == pytest.approx(band, abs=5e-5)
    assert trtllm_theta(n) == pytest.approx(theta, abs=5e-5)


def test_trtllm_pass_rule_and_sizing():
    assert trtllm_passes(0.65, 0.72, 198)
    assert not trtllm_passes(0.63, 0.72, 198)
    assert trtllm_theta(trtllm_samples_for_theta(0.03)) <= 0.03
