"""The simulated model's opt-in repeat-to-repeat noise: per-question difficulty from a Beta law."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.simserver.sampling import question_difficulty

EDGES = [
    # (u, accuracy, spread, expected): no spread left to draw, or no room for any
    (0.3, 0.7, 1.0, 0.7),
    (0.99, 0.0, 0.4, 0.0),
    (0.01, 1.0, 0.4, 1.0),
]


@pytest.mark.parametrize(("u", "accuracy", "spread", "expected"), EDGES)
def test_difficulty_edges(u: float, accuracy: float, spread: float, expected: float) -> None:
    assert question_difficulty(u, accuracy, spread) == expected


@pytest.mark.parametrize(("accuracy", "spread"), [(0.67, 0.36), (0.82, 0.71), (0.96, 0.4)])
def test_difficulties_have_the_mean_and_icc_asked(accuracy: float, spread: float) -> None:
    # Over the questions' uniforms the difficulties are the Beta law: its mean is the cell's
    # accuracy and Var(p) / (m (1 - m)) is the intraclass correlation 1 - spread.
    # 1,000 mid-quantiles: the rule's error (4e-5 at most) is 50x inside the tolerances below.
    mid_quantiles = (np.arange(1000) + 0.5) / 1000
    p = np.array([question_difficulty(u, accuracy, spread) for u in mid_quantiles])
    assert p.mean() == pytest.approx(accuracy, abs=2e-3)
    assert p.var() / (accuracy * (1 - accuracy)) == pytest.approx(1 - spread, abs=0.01)
    assert np.all(np.diff(p) >= 0)  # a harder question stays harder in every cell


@pytest.mark.parametrize(
    ("x", "a", "b", "expected"),
    [
        (0.3, 1.0, 1.0, 0.3),  # uniform
        (0.3, 2.5, 1.0, 0.3**2.5),  # I_x(a, 1) = x^a
        (0.3, 1.0, 4.0, 1 - 0.7**4),  # I_x(1, b) = 1 - (1 - x)^b
        (0.5, 7.3, 7.3, 0.5),  # symmetric
        (0.0, 2.0, 3.0, 0.0),
        (1.0, 2.0, 3.0, 1.0),
    ],
)
def test_regularized_beta_closed_forms(x: float, a: float, b: float, expected: float) -> None:
    from pipeline.simserver.sampling import regularized_beta

    assert regularized_beta(x, a, b) == pytest.approx(expected, abs=1e-12)
