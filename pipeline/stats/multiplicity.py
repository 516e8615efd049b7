"""Holm's step-down correction across the cells of a report (reference/eval-anchors.md 8.10)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> list[float]:
    """Holm-adjusted p-values (statsmodels ``multipletests(method="holm")``).

    Compare the adjusted values with ``alpha``: the family-wise error over all of them is then at
    most ``alpha``. NaN stays NaN (a check without a test).
    """
    values = np.asarray(pvalues, dtype=float)
    out = np.full(values.shape, np.nan)
    ok = ~np.isnan(values)
    if ok.any():
        out[ok] = multipletests(values[ok], alpha=alpha, method="holm")[1]
    return [float(x) for x in out]
