import numpy as np
import pytest

from evals.metrics import clustered_stderr
from pipeline.measuring.accept_stats import ratio_stderr
from pipeline.stats.clustered import (
    log_ratio_se,
    question_means,
    ragged_to_matrix,
    within_question_se,
)


@pytest.mark.parametrize(
    ("values", "clusters", "se"),
    [
        # mean 0.75, cluster residual sums -0.5 and 0.5: sqrt(2 / (1 * 16) * 0.5) = 0.25
        ([1, 0, 1, 1], ["a", "a", "b", "b"], 0.25),
        # one value per cluster: the CLT form sqrt(var / n) = sqrt(1/3 / 4)
        ([1, 0, 1, 0], ["a", "b", "c", "d"], np.sqrt((1 / 3) / 4)),
        ([1, 0], ["a", "a"], None),
    ],
)
def test_clustered_se_by_hand(values, clusters, se):
    out = clustered_stderr(np.array(values, dtype=float), clusters)
    assert out == (None if se is None else pytest.approx(se))


@pytest.mark.parametrize(
    ("matrix", "se"),
    [
        # variances 0.5, 0, 0 over 2 repeats: sqrt(0.5 / 2) / 3
        ([[1, 0], [1, 1], [0, 0]], 0.5 / 3),
        # the single-repeat question gets the pooled variance (0.25): sqrt(0.5/2 + 0 + 0.25) / 3
        ([[1, 0], [1, 1], [1, np.nan]], np.sqrt(0.25 + 0.25) / 3),
        ([[1], [0]], None),
    ],
)
def test_within_question_se_by_hand(matrix, se):
    out = within_question_se(np.array(matrix, dtype=float))
    assert out == (None if se is None else pytest.approx(se))


def test_single_ratio_log_se_matches_accept_stats_ratio_stderr():
    rng = np.random.default_rng(5)
    completion = rng.integers(50, 400, size=30).astype(float)
    verify = np.ceil(completion / rng.uniform(1.5, 3.0, size=30))
    ratio = completion.sum() / verify.sum()
    log_se = log_ratio_se([completion], [verify], [str(i) for i in range(30)])
    assert ratio * log_se == pytest.approx(ratio_stderr(completion, verify))


@pytest.mark.parametrize("factor", [1.0, 0.8])
def test_paired_log_ratio_has_no_error_when_b_is_proportional_to_a(factor):
    rng = np.random.default_rng(6)
    c_a = rng.integers(50, 400, size=20).astype(float)
    v_a = np.ceil(c_a / 2.5)
    c_b, v_b = c_a * factor, v_a
    se = log_ratio_se([c_b, v_a], [v_b, c_a], [str(i // 2) for i in range(20)])
    assert se == pytest.approx(0.0, abs=1e-12)


def test_log_ratio_se_refuses_empty_totals():
    with pytest.raises(ValueError, match="positive"):
        log_ratio_se([np.zeros(3)], [np.ones(3)], ["a", "b", "c"])


def test_ragged_to_matrix_pads_and_sorts():
    m = ragged_to_matrix({"q2": [1.0], "q1": [0.0, 1.0]})
    assert m.shape == (2, 2)
    assert list(question_means(m)) == [0.5, 1.0]
    with pytest.raises(ValueError, match="no values"):
        ragged_to_matrix({"q": []})
    with pytest.raises(ValueError, match="no questions"):
        ragged_to_matrix({})
