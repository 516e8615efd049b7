"""Verdicts across the cells of a sweep, and the release decision a release engineer signs.

A release is GO only when every candidate is GO: an intersection-union test. Its false GO (some
candidate at or beyond the margin, the release GO) is at most the largest single cell's, so each
cell's GO is read at its own level with no correction (Berger 1982). A NO-GO is an alarm, and
across many cells alarms add up: NO-GO p-values are Holm-corrected across the family, so the
chance that any clean candidate raises one stays at or below alpha.

Arrays: the last axis is the family (cells); leading axes are replications (the simulation).
"""

from __future__ import annotations

import numpy as np

from pipeline.stats.multiplicity import holm_array
from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO

FloatArray = np.ndarray


def family_pvalues(
    p_go: FloatArray, p_nogo: FloatArray, scale: FloatArray | float, correct_nogo: bool,
    split: FloatArray | int = 1,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """GO p-values as they are (scaled to ``alpha``), NO-GO p-values corrected across cells.

    Args:
        p_go: ``(..., cells)`` p-values of "drop >= margin" (NaN: no test).
        p_nogo: ``(..., cells)`` p-values of "drop <= margin" (NaN: no test).
        scale: ``alpha / level`` per cell (a sequential look is read at its own level).
        correct_nogo: apply Holm to the NO-GO p-values (the policy's ``multiplicity``).
        split: per cell, the family its sequential design split NO-GO's alpha over before the
            first look (1: none). Those cells are read with that Bonferroni factor (what their
            looks stopped on); Holm runs over the others.

    Returns:
        The adjusted ``(p_go, p_nogo)``, each to be compared with alpha.
    """
    go = np.minimum(1.0, np.asarray(p_go, dtype=float) * scale)
    nogo = np.minimum(1.0, np.asarray(p_nogo, dtype=float) * scale)
    pre = np.broadcast_to(np.asarray(split), nogo.shape) > 1
    if not pre.any():
        return go, holm_array(nogo) if correct_nogo else nogo
    bonferroni = np.minimum(1.0, nogo * np.asarray(split))
    rest = holm_array(np.where(pre, np.nan, nogo)) if correct_nogo else nogo
    return go, np.where(pre, bonferroni, rest)


def family_verdicts(p_go: FloatArray, p_nogo: FloatArray, alpha: float) -> np.ndarray:
    """GO / NO-GO / INCONCLUSIVE of adjusted p-values (NaN never decides)."""
    go, nogo = np.asarray(p_go, dtype=float), np.asarray(p_nogo, dtype=float)
    out = np.full(np.broadcast(go, nogo).shape, INCONCLUSIVE, dtype=object)
    with np.errstate(invalid="ignore"):
        out[go <= alpha] = GO
        out[nogo <= alpha] = NO_GO
    return out


def release_verdict(cell_verdicts: np.ndarray) -> np.ndarray:
    """GO when every cell is GO, NO-GO when any is NO-GO, else UNDECIDED (along the last axis)."""
    v = np.asarray(cell_verdicts, dtype=object)
    out = np.full(v.shape[:-1], "UNDECIDED", dtype=object)
    out[np.all(v == GO, axis=-1)] = GO
    out[np.any(v == NO_GO, axis=-1)] = NO_GO
    return out
