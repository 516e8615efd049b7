"""One alpha for a cell's family of NO-GO checks: the mean test and the broken-prompt check.

A cell is NO-GO when its mean test says the drop is beyond the margin *or* its broken-prompt
check flags a question. Each read at alpha, the union is not a level-alpha test: a candidate
exactly at its NO-GO boundary, its drop on the uncertain questions (which the broken check
flags when they did get worse), was NO-GO 5.8% at a fixed 8 repeats and 5.5% anytime. Bonferroni
within the cell fixes that: the broken-prompt check gets ``BROKEN_SHARE`` of NO-GO's alpha, the
mean test the rest, so the two together are NO-GO at its boundary at most alpha.

Why a fifth: the broken check tests a pattern (right in most of the baseline's repeats, never in
the candidate's) whose Fisher p-values fall fast with repeats, so a regression concentrated on
~10 questions is still caught in every simulated run at a fifth of alpha, while the mean test,
which decides every diffuse regression, keeps four fifths. GO is unchanged (read at alpha, and
only when nothing breaks at the broken check's level).

Sequential cells store the share in their design (``SequentialDesign.broken_share``); a cell
written before the split has none and is read as it stopped: each check at the full level.
"""

from __future__ import annotations

import numpy as np

FloatArray = np.ndarray
BROKEN_SHARE = 0.2  # the broken-prompt check's share of NO-GO's alpha (see the docstring)


def nogo_shares(broken_share: float | None = BROKEN_SHARE) -> tuple[float, float]:
    """``(mean test's share, broken check's share)`` of NO-GO's alpha.

    ``None``: a cell written before the split, each check read at the full level.
    """
    if broken_share is None:
        return 1.0, 1.0
    if not 0 < broken_share < 1:
        raise ValueError(f"broken_share={broken_share!r} must be in (0, 1) (e.g. {BROKEN_SHARE})")
    return 1.0 - broken_share, broken_share


def on_family_scale(p: FloatArray | float, share: float) -> FloatArray:
    """A member's p-value on the family's alpha scale: ``min(1, p / share)`` (NaN stays NaN)."""
    scaled: FloatArray = np.minimum(1.0, np.asarray(p, dtype=float) / share)
    return scaled
