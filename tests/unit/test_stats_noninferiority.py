import numpy as np
import pytest
from scipy import stats

from evals.metrics import clustered_stderr
from pipeline.stats.noninferiority import (
    GO,
    INCONCLUSIVE,
    NO_GO,
    margin_test,
    paired_drop,
    verdict,
    verdicts,
)


@pytest.mark.parametrize(
    ("diffs", "drop", "se", "df"),
    [
        # mean -0.125; squared deviations sum 2.1875 -> var 0.729167 -> se sqrt(var)/2
        ([0.0, -1.0, 1.0, -0.5], 0.125, 0.4269563, 3),
        ([1.0, 1.0], -1.0, 0.0, 1),
        ([0.5, np.nan, -0.5, 0.0], 0.0, 0.2886751, 2),  # NaN = a question without pairs
    ],
)
def test_paired_drop_by_hand(diffs, drop, se, df):
    d, s, f = paired_drop(np.array(diffs))
    assert d == pytest.approx(drop)
    assert s == pytest.approx(se, rel=1e-6)
    assert f == df


def test_paired_drop_is_the_clustered_se_for_equal_cluster_sizes():
    rng = np.random.default_rng(3)
    per_repeat = rng.integers(-1, 2, size=(50, 4)).astype(float)
    _, se, _ = paired_drop(per_repeat.mean(axis=1))
    clusters = np.repeat(np.arange(50).astype(str), 4)
    assert se == pytest.approx(clustered_stderr(per_repeat.ravel(), clusters))


def test_paired_drop_vectorised_rows_match_single_rows():
    rng = np.random.default_rng(4)
    batch = rng.normal(size=(5, 30))
    drop, se, _ = paired_drop(batch)
    for row in range(5):
        d, s, _ = paired_drop(batch[row])
        assert drop[row] == pytest.approx(d)
        assert se[row] == pytest.approx(s)


@pytest.mark.parametrize(
    ("drop", "se", "margin", "expected"),
    [
        (0.005, 0.008, 0.02, GO),  # upper 0.005 + 1.6526 * 0.008 = 0.0182 <= 0.02
        (0.010, 0.008, 0.02, INCONCLUSIVE),  # upper 0.0232 > 0.02, lower -0.0032 <= 0.02
        (0.040, 0.008, 0.02, NO_GO),  # lower 0.0268 > 0.02
        (-0.03, 0.008, 0.02, GO),  # the candidate is better
        (0.020, 0.0, 0.02, GO),  # zero variance: the estimate is the bound
        (0.021, 0.0, 0.02, NO_GO),
    ],
)
def test_margin_test_verdicts(drop, se, margin, expected):
    test = margin_test(drop, se, 197, margin, 0.05)
    assert verdict(test) == expected
    q = stats.t.ppf(0.95, 197)
    assert float(test.upper) == pytest.approx(drop + q * se)
    assert float(test.lower) == pytest.approx(drop - q * se)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("margin", [0.0, 0.02, 0.1])
def test_p_values_and_interval_match_scipy_ttest(seed, margin):
    rng = np.random.default_rng(seed)
    diffs = rng.normal(-0.01, 0.1, size=40)
    test = margin_test(*paired_drop(diffs), margin, 0.05)
    # drop >= margin  <=>  mean(diffs) + margin <= 0
    assert float(test.p_go) == pytest.approx(
        stats.ttest_1samp(diffs + margin, 0.0, alternative="greater").pvalue
    )
    assert float(test.p_nogo) == pytest.approx(
        stats.ttest_1samp(diffs + margin, 0.0, alternative="less").pvalue
    )
    ci = stats.ttest_1samp(diffs, 0.0).confidence_interval(0.95)
    assert float(test.ci95_low) == pytest.approx(-ci.high)
    assert float(test.ci95_high) == pytest.approx(-ci.low)


def test_p_value_and_bound_rules_agree_on_a_grid():
    drops = np.linspace(-0.02, 0.06, 81)
    test = margin_test(drops, 0.01, 100, 0.02, 0.05)
    by_bounds = np.where(test.upper <= 0.02, GO, np.where(test.lower > 0.02, NO_GO, INCONCLUSIVE))
    assert list(verdicts(test.p_go, test.p_nogo, 0.05)) == list(by_bounds)


def test_verdicts_at_per_cell_levels():
    out = verdicts([0.01, 0.01, 0.9], [0.99, 0.99, 0.001], [0.02, 0.005, 0.005])
    assert list(out) == [GO, INCONCLUSIVE, NO_GO]


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.2])
def test_margin_test_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        margin_test(0.0, 0.01, 10, 0.02, alpha)
