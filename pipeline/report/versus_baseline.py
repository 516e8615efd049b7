"""A candidate against the baseline variant, paired by (question, repeat).

Accuracy (per-question mean differences, clustered SE), exact McNemar with one repeat, and the
token-weighted accept length (log ratio, clustered by question).
"""

from __future__ import annotations

import math
from typing import Any

from pipeline.report.load import CellRecord
from pipeline.report.pairing import Paired, SampleReader, Samples, accept_pairs, pair_samples
from pipeline.report.samples import SampleError
from pipeline.report.tolerance import EvalTolerance
from pipeline.report.verdicts import (
    ERROR,
    INFO,
    NO_BASELINE,
    Check,
    Estimate,
    make_check,
    stat_check,
)
from pipeline.stats.clustered import log_ratio_se, question_means
from pipeline.stats.mcnemar import discordant_counts, mcnemar_exact
from pipeline.stats.noninferiority import paired_drop
from pipeline.stats.power import variance_components
from pipeline.stats.sequential import SequentialDesign, level_at

ACC = "accuracy_vs_baseline"


def baseline_checks(
    cell: CellRecord, base: CellRecord | None, note: str, name: str, margins: EvalTolerance,
    alpha: float, read: SampleReader,
) -> list[Check]:  # fmt: skip
    """Accuracy (and McNemar, accept length) of ``cell`` against its baseline on eval ``name``."""
    if base is None:
        return [make_check(cell, name, ACC, NO_BASELINE, note)]
    if name not in base.evals:
        return [make_check(cell, name, ACC, NO_BASELINE, f"{base.label} has no eval {name}")]
    try:
        b_samples, c_samples = read(base, name), read(cell, name)
    except SampleError as err:
        return [make_check(cell, name, ACC, ERROR, str(err))]
    paired = pair_samples(b_samples, c_samples)
    if not paired.keys:
        message = f"no (question, repeat) in common with baseline {base.label}"
        return [make_check(cell, name, ACC, ERROR, message)]
    out: list[Check] = []
    # An ungraded eval (MT-Bench-style, for accept rates) has no accuracy to compare.
    if cell.evals[name].get("graded", True) is not False:
        out.append(accuracy_check(cell, base, note, name, margins.max_drop, alpha, paired))
    if paired.repeats == 1 and out:
        b, c = discordant_counts(paired.base.astype(bool), paired.cand.astype(bool))
        out.append(make_check(cell, name, "mcnemar", INFO, "", b=b, c=c, p=mcnemar_exact(b, c)))
    if cell.speculative and base.speculative:
        out.append(accept_check(cell, base, name, margins.accept_band, alpha, b_samples, c_samples))
    return out


def sequential_level(summary: dict[str, Any], repeats: int, alpha: float) -> tuple[float, str]:
    """The level a sequentially stopped cell is read at (its look's), else ``alpha``.

    A cell run with ``pipeline.stats.sequential`` records ``sequential`` (the design's fields) on
    its eval summary; its final look decides at that look's nominal level, not at ``alpha``.
    """
    seq = summary.get("sequential")
    if not isinstance(seq, dict):
        return alpha, ""
    keys = ("max_repeats", "repeats_per_round", "alpha", "margin", "spending")
    design = SequentialDesign(**{k: seq[k] for k in keys if k in seq})
    look = min(design.n_looks, max(1, math.ceil(repeats / design.repeats_per_round)))
    return level_at(design, look), f"sequential look {look} of {design.n_looks}"


def accuracy_check(
    cell: CellRecord, base: CellRecord, note: str, name: str, margin: float, alpha: float,
    paired: Paired,
) -> Check:  # fmt: skip
    """Paired non-inferiority of accuracy: per-question mean differences, clustered SE."""
    drop, se, df = (float(x) for x in paired_drop(question_means(paired.diffs)))
    level, how = sequential_level(cell.evals[name], paired.repeats, alpha)
    check = stat_check(
        cell, name, ACC, Estimate(drop, se, df), margin, alpha, level, baseline=base.label,
        note=note, sequential=how, n_questions=len(paired.questions), repeats=paired.repeats,
        n_pairs=len(paired.keys), unpaired=paired.unpaired,
        accuracy_baseline=float(paired.base.mean()), accuracy_candidate=float(paired.cand.mean()),
    )  # fmt: skip
    check.components = variance_components(paired.diffs)
    return check


def accept_check(
    cell: CellRecord, base: CellRecord, name: str, band: float, alpha: float, b_samples: Samples,
    c_samples: Samples,
) -> Check:  # fmt: skip
    """Token-weighted accept length, paired by prompt: drop = log(AL_base / AL_cand)."""
    (cb, vb, cc, vc), clusters = accept_pairs(b_samples, c_samples)
    groups = len(set(clusters))
    if groups < 2:
        message = f"fewer than two questions with accept statistics on both it and {base.label}"
        return make_check(cell, name, "accept_vs_baseline", ERROR, message)
    al_base, al_cand = float(cb.sum() / vb.sum()), float(cc.sum() / vc.sum())
    se = log_ratio_se([cc, vb], [vc, cb], clusters) or 0.0
    est = Estimate(math.log(al_base / al_cand), se, groups - 1)
    return stat_check(
        cell, name, "accept_vs_baseline", est, -math.log(1 - band), alpha, alpha,
        baseline=base.label, accept_length_baseline=al_base, accept_length_candidate=al_cand,
        band=band, n_pairs=len(clusters), scale="log",
    )  # fmt: skip
