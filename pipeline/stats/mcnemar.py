"""Exact McNemar test for one repeat per question.

b = questions only the baseline got right, c = questions only the candidate got right. Under
"no difference" each discordant question is a fair coin, so the one-sided p-value for "the
candidate is worse" is P[Bin(b + c, 1/2) >= b] (scipy.stats.binomtest).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def discordant_counts(
    baseline: Sequence[bool] | np.ndarray, candidate: Sequence[bool] | np.ndarray
) -> tuple[int, int]:
    """``(b, c)``: pairs right only for the baseline, pairs right only for the candidate."""
    a, b = np.asarray(baseline, dtype=bool), np.asarray(candidate, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired outcomes differ in length: {a.shape} vs {b.shape}")
    return int(np.sum(a & ~b)), int(np.sum(~a & b))


def mcnemar_exact(b: int, c: int) -> float:
    """One-sided exact McNemar p-value that the candidate is worse; 1.0 without discordance."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    return float(stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue)
