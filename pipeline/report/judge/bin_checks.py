"""Paired checks by bin: accuracy and accept length per context length and per category.

A change that acts at long context (skip-softmax scaled by the sequence length, fp8 KV error
growing with context) or in one domain (acceptance on code against prose) can cost a bin 10
points while the eval's aggregate stays inside its margin. Each bin is a paired comparison on
the questions that fall in it, with the pairing the aggregate checks use (``pairing.py``,
``accept_pairing.py``) and the statistics of ``pipeline.stats.by_bin`` (NO-GO Holm-corrected
over the bins, GO per bin). A question's bin is read from the baseline's sample (else the
candidate's): its length bin from ``meta.prompt_tokens`` (the generated length in the served
model's tokens), else the server's ``prompt_tokens``; its category from ``meta.category``. An
eval whose questions fall in one bin has no check by that dimension: the aggregate is it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from pipeline.report.judge.accept_pairing import accept_pairs
from pipeline.report.judge.check_kinds import (
    ACCEPT_BY_CATEGORY,
    ACCEPT_BY_LENGTH,
    ACCURACY_BY_CATEGORY,
    ACCURACY_BY_LENGTH,
    ByBin,
)
from pipeline.report.judge.check_numbers import (
    AcceptByBinNumbers,
    AccuracyByBinNumbers,
    BinRow,
    ByBinNumbers,
    PerPosition,
)
from pipeline.report.judge.describe import rel
from pipeline.report.judge.pairing import Paired, Samples
from pipeline.report.judge.verdicts import INCONCLUSIVE, Check, make_check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import EvalTolerance
from pipeline.stats import by_bin
from pipeline.stats.by_bin import AcceptPairs, BinCheck, length_bin

Labeler = Callable[[dict[str, Any]], str | None]


def length_label(record: dict[str, Any]) -> str | None:
    """A sample's context-length bin, or None when it records no prompt length."""
    meta = record.get("meta") or {}
    tokens = meta.get("prompt_tokens", record.get("prompt_tokens"))
    return length_bin(int(tokens)) if isinstance(tokens, int) and tokens >= 0 else None


def category_label(record: dict[str, Any]) -> str | None:
    """A sample's category (``meta.category``), or None."""
    category = (record.get("meta") or {}).get("category")
    return str(category) if category not in (None, "") else None


DIMENSIONS: tuple[tuple[str, Labeler, ByBin, ByBin], ...] = (
    ("length", length_label, ACCURACY_BY_LENGTH, ACCEPT_BY_LENGTH),
    ("category", category_label, ACCURACY_BY_CATEGORY, ACCEPT_BY_CATEGORY),
)


def question_labels(base: Samples, cand: Samples, label: Labeler) -> dict[str, str]:
    """Each question's bin: from the baseline's samples first (both sides ask the same text)."""
    out: dict[str, str] = {}
    for samples in (cand, base):  # the baseline's label wins where both have one
        for (q, _), record in samples.items():
            if (found := label(record)) is not None:
                out[q] = found
    return out


def bin_checks(
    cell: CellRecord, base: CellRecord, name: str, margins: EvalTolerance, alpha: float,
    samples: tuple[Samples, Samples], paired: Paired,
) -> list[Check]:  # fmt: skip
    """The by-length and by-category checks of one eval (none where it has a single bin)."""
    b_samples, c_samples = samples
    out = []
    for dimension, label, accuracy_kind, accept_kind in DIMENSIONS:
        labels = question_labels(b_samples, c_samples, label)
        if len(set(labels.values())) < 2:
            continue
        tagged = (labels, dimension)
        if cell.evals[name].graded:
            out.append(_accuracy(cell, base, name, margins, alpha, paired, tagged, accuracy_kind))
        if cell.speculative and base.speculative:
            out.append(_accept(cell, base, name, margins.accept_band, alpha, samples, tagged,
                               accept_kind))  # fmt: skip
    return out


def _accuracy(
    cell: CellRecord, base: CellRecord, name: str, margins: EvalTolerance, alpha: float,
    paired: Paired, tagged: tuple[dict[str, str], str], kind: ByBin,
) -> Check:  # fmt: skip
    labels, dimension = tagged
    keep = np.array([q in labels for q in paired.questions], dtype=bool)
    o = paired.outcomes
    errored = None if o.cand_errored is None else o.cand_errored[keep]
    part = type(o)(o.base[keep], o.cand[keep], np.asarray(o.cand_asked)[keep], o.by_repeat, errored)
    tags = [labels[q] for q in paired.questions if q in labels]
    found = by_bin.accuracy_by_bin(part, tags, margins.max_drop, alpha)
    numbers = partial(AccuracyByBinNumbers, margin=margins.max_drop, dimension=dimension)
    return _check(cell, name, kind, found, lambda d: -d, partial(numbers, baseline=base.label))


def _accept(
    cell: CellRecord, base: CellRecord, name: str, band: float, alpha: float,
    samples: tuple[Samples, Samples], tagged: tuple[dict[str, str], str], kind: ByBin,
) -> Check:  # fmt: skip
    labels, dimension = tagged
    (cb, vb, cc, vc), questions = accept_pairs(*samples)
    keep = [i for i, q in enumerate(questions) if q in labels]
    pairs = AcceptPairs(cb[keep], vb[keep], cc[keep], vc[keep], [questions[i] for i in keep],
                        [labels[questions[i]] for i in keep])  # fmt: skip
    found = by_bin.accept_by_bin(pairs, band, alpha)
    positions = per_position(samples, labels)
    numbers = partial(AcceptByBinNumbers, baseline=base.label, band=band,
                      per_position=positions, dimension=dimension)  # fmt: skip
    return _check(cell, name, kind, found, lambda d: -rel(d), numbers)


def _row(b: BinCheck, change: Callable[[float], float]) -> BinRow:
    # The drop's upper bound is the change's lower one: a drop of 0.1 is a change of -0.1.
    return BinRow(b.label, b.questions, change(b.drop), change(b.upper), change(b.lower),
                  b.p_go, b.p_nogo, b.verdict)  # fmt: skip


def _check(
    cell: CellRecord, name: str, kind: ByBin, found: by_bin.ByBin,
    change: Callable[[float], float], numbers: Callable[..., ByBinNumbers],
) -> Check:  # fmt: skip
    rows = [_row(b, change) for b in found.checks]
    made = numbers(bins=rows, alpha=found.alpha, multiplicity=found.multiplicity())
    check = make_check(cell, name, kind, INCONCLUSIVE, "", made)
    tested = [b for b in found.checks if math.isfinite(b.p_nogo)]
    # The worst bin decides: NO-GO's smallest Holm-corrected p, GO's largest (every bin GO).
    check.p_nogo = min((b.p_nogo for b in tested), default=1.0)
    all_tested = tested and len(tested) == len(found.checks)
    check.p_go = max(b.p_go for b in tested) if all_tested else 1.0
    check.level = found.alpha
    return check


def per_position(samples: tuple[Samples, Samples], labels: dict[str, str]) -> PerPosition:
    """Per-position acceptance per bin, both sides, from the samples' spec histograms."""
    out: PerPosition = {}
    for side, records in zip(("baseline", "candidate"), samples, strict=True):
        totals: dict[str, np.ndarray] = {}
        for (q, _), record in records.items():
            hist = (record.get("spec") or {}).get("histogram")
            if q in labels and hist and not record.get("error_kind"):
                totals[labels[q]] = _add(totals.get(labels[q]), np.asarray(hist, dtype=float))
        out[side] = {b: _acceptance(t) for b, t in sorted(totals.items())}
    return out


def _add(total: np.ndarray | None, hist: np.ndarray) -> np.ndarray:
    if total is None:
        return hist
    width = max(len(total), len(hist))
    summed: np.ndarray = np.pad(total, (0, width - len(total)))
    summed[: len(hist)] += hist
    return summed


def _acceptance(total: np.ndarray) -> list[float]:
    # Share of verify steps that accepted the draft at position 1, 2, ... (as accept_stats).
    steps = total.sum()
    at_least = np.cumsum(total[::-1])[::-1]
    return [round(float(x / steps), 4) for x in at_least[1:]] if steps else []
