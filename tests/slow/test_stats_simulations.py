"""Monte-Carlo checks of the sequential design and its stagewise p-values (seconds each)."""

import numpy as np
import pytest

from pipeline.stats.sequential import SequentialDesign, boundaries

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("spending", ["obrien_fleming", "pocock"])
def test_overall_crossing_probability_is_alpha(spending):
    # Brownian motion at the looks under H0: P(any Z_j >= c_j) must equal alpha.
    design = SequentialDesign(16, 2, alpha=0.05, spending=spending)
    rng = np.random.default_rng(11)
    steps = rng.normal(size=(400_000, design.n_looks))
    z = np.cumsum(steps, axis=1) / np.sqrt(np.arange(1, design.n_looks + 1))
    crossed = (z >= np.array(boundaries(design))).any(axis=1).mean()
    assert crossed == pytest.approx(0.05, abs=3 * np.sqrt(0.05 * 0.95 / 400_000))


def test_a_stopped_cells_stagewise_p_is_alpha_spent_at_its_boundary():
    from scipy import stats

    from pipeline.stats.sequential import SequentialDesign, boundaries, spent_alpha
    from pipeline.stats.sequential_pvalues import stagewise

    design = SequentialDesign(24, 2, 0.05, 0.02)
    for look, bound in enumerate(boundaries(design), start=1):
        at = stats.norm.sf(bound)
        p = stagewise(design, look, np.array([at, at * 1.01, at * 0.5]))
        assert p[0] == pytest.approx(spent_alpha(look / 12, 0.05, "obrien_fleming"), abs=1e-9)
        assert p[1] == 1.0  # did not cross: not rejected
        assert p[2] <= p[0] <= 0.05


def test_stagewise_p_is_uniform_under_the_null():
    # Brownian motion at the boundary of H0 (Jennison & Turnbull's canonical form).
    from scipy import stats

    from pipeline.stats.sequential import SequentialDesign, boundaries
    from pipeline.stats.sequential_pvalues import stagewise

    design = SequentialDesign(16, 2, 0.05, 0.02)
    rng = np.random.default_rng(0)
    z = np.cumsum(rng.standard_normal((40000, 8)), axis=1) / np.sqrt(np.arange(1, 9))
    crossed = z >= np.array(boundaries(design))
    stop = np.where(crossed.any(axis=1), crossed.argmax(axis=1), 7)
    p = stagewise(design, stop + 1, stats.norm.sf(z[np.arange(len(z)), stop]))
    for level in (0.01, 0.05):
        assert np.mean(p <= level) == pytest.approx(level, abs=0.004)
