"""A cell against its reference values (``conf/tolerance/references``).

Accuracy and accept length, from the run's measured variance and the reference's own standard
error.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from pipeline.report.judge.accept_pairing import accept_rows
from pipeline.report.judge.check_kinds import ACCEPT_VS_REFERENCE, ACCURACY_VS_REFERENCE
from pipeline.report.judge.drop_numbers import AcceptVsReferenceNumbers, AccuracyVsReferenceNumbers
from pipeline.report.judge.pairing import SampleReader, Samples, score_matrix
from pipeline.report.judge.verdicts import (
    ERROR,
    FAIL,
    NO_REFERENCE,
    Check,
    Estimate,
    make_check,
    stat_check,
)
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.references import Reference, find_reference
from pipeline.report.load.samples import SampleError
from pipeline.report.load.tolerance import EvalTolerance, Tolerance
from pipeline.results.result_types import AcceptBlock, EvalSummary
from pipeline.stats.clustered import log_ratio_se, question_means, within_question_se
from pipeline.stats.power import VarianceComponents, variance_components


def reference_checks(
    cell: CellRecord, name: str, summary: EvalSummary, margins: EvalTolerance, tol: Tolerance,
    read: SampleReader,
) -> list[Check]:  # fmt: skip
    """The reference checks of ``cell`` on eval ``name`` (NO REFERENCE when none matches)."""
    ref = find_reference(
        tol.references, models=(cell.model, cell.model_path), eval_name=name,
        kv_dtype=cell.kv_dtype, speculative=cell.speculative, variant=cell.variant, gpu=cell.gpu,
    )  # fmt: skip
    if ref is None:
        message = (f"no reference for model {cell.model}, eval {name}, KV {cell.kv_dtype}, "
                   f"speculative {bool(cell.speculative)} in {tol.path.parent}")  # fmt: skip
        return [make_check(cell, name, ACCURACY_VS_REFERENCE, NO_REFERENCE, message)]
    try:
        samples: Samples | None = read(cell, name)
    except SampleError:
        samples = None  # fall back to result.json's summary figures
    out = []
    if ref.value("accuracy") is not None:
        out.append(accuracy_check(cell, name, summary, samples, ref, margins, tol))
    if ref.value("accept_length") is not None and cell.speculative:
        out.append(accept_check(cell, name, summary, samples, ref, margins, tol.alpha))
    stopped = stopped_early(summary)
    for check in out:
        if stopped and isinstance(
            check.numbers, (AccuracyVsReferenceNumbers, AcceptVsReferenceNumbers)
        ):
            check.numbers = replace(check.numbers, stopped_early=stopped)
    return out


def stopped_early(summary: EvalSummary) -> str:
    """Why a sequentially stopped GO cell's reference check may not decide (else '').

    The stopping rule decides against the baseline; a cell it stopped with GO after a few
    repeats has too few for a reference check to decide. The report then shows that check
    undecided as INFO, in words, not INCONCLUSIVE: a FAIL still counts.
    """
    seq = summary.sequential
    if seq is None or seq.role != "candidate" or seq.decision != "GO":
        return ""
    return (f"the sequential rule stopped this cell with GO against the baseline at look "
            f"{seq.look}; too few repeats for the reference check to decide, so it is "
            "shown, not counted")  # fmt: skip


def _source(ref: Reference) -> dict[str, str]:
    return {"reference_file": ref.where, **ref.provenance}


def _run_accuracy(
    samples: Samples | None, summary: EvalSummary, within: bool
) -> tuple[float | None, float, int, str, Any]:
    # (accuracy, SE of the run, questions, how the SE was computed, the score matrix or None)
    if not samples:
        n = int(summary.n_questions or 2)
        how = "clustered (result.json; samples unreadable)"
        return summary.accuracy, float(summary.stderr or 0.0), n, how, None
    matrix = score_matrix(samples)
    means = question_means(matrix)
    n = len(means)
    se = within_question_se(matrix) if within else None
    if se is not None:
        return float(means.mean()), se, n, "within-question", matrix
    return float(means.mean()), float(np.std(means, ddof=1) / math.sqrt(n)), n, "clustered", matrix


def accuracy_check(
    cell: CellRecord, name: str, summary: EvalSummary, samples: Samples | None,
    ref: Reference, margins: EvalTolerance, tol: Tolerance,
) -> Check:  # fmt: skip
    """Drop = reference - accuracy; SE = hypot(run SE, reference SE)."""
    within = tol.reference_variance == "within"
    acc, se_run, n, how, matrix = _run_accuracy(samples, summary, within)
    if acc is None:
        return make_check(cell, name, ACCURACY_VS_REFERENCE, ERROR, "no accuracy in result")
    value, ref_se = float(ref.value("accuracy") or 0.0), ref.value("accuracy_stderr") or 0.0
    est = Estimate(value - acc, math.hypot(se_run, ref_se), n - 1)
    repeats = matrix.shape[1] if matrix is not None else summary.n_repeats
    numbers = partial(
        AccuracyVsReferenceNumbers, reference=value, reference_stderr=ref_se, accuracy=acc,
        se_run=se_run, se_method=how, n_questions=n, repeats=repeats, source=_source(ref),
    )  # fmt: skip
    check = stat_check(
        cell, name, ACCURACY_VS_REFERENCE, est, margins.reference_max_drop, tol.alpha,
        tol.alpha, numbers,
    )  # fmt: skip
    if matrix is not None:
        # The reference's own SE behaves like between-question variance: repeats cannot shrink it.
        comp = variance_components(matrix)
        between = n * ref_se**2 + (0.0 if how == "within-question" else comp.between)
        check.components = VarianceComponents(comp.within, between, n)
    return check


def accept_check(
    cell: CellRecord, name: str, summary: EvalSummary, samples: Samples | None,
    ref: Reference, margins: EvalTolerance, alpha: float,
) -> Check:  # fmt: skip
    """Drop = log(reference / accept length), SE clustered by question (delta method)."""
    tokens, verify, clusters = accept_rows(samples or {})
    if len(set(clusters)) >= 2:
        al = float(tokens.sum() / verify.sum())
        se_log, df = log_ratio_se([tokens], [verify], clusters) or 0.0, len(set(clusters)) - 1
    else:
        accept = summary.accept or AcceptBlock()
        if not accept.accept_length:
            message = "speculative cell without an accept metric"
            return make_check(cell, name, ACCEPT_VS_REFERENCE, FAIL, message)
        al = float(accept.accept_length)
        se_log = float(accept.accept_length_stderr or 0.0) / al
        df = max(1, int(accept.n_with_spec or 2) - 1)
    value, ref_se = float(ref.value("accept_length") or 1.0), ref.value("accept_length_stderr")
    est = Estimate(math.log(value / al), math.hypot(se_log, (ref_se or 0.0) / value), df)
    band = margins.reference_accept_band
    numbers = partial(
        AcceptVsReferenceNumbers, reference=value, reference_stderr=ref_se or 0.0,
        accept_length=al, band=band, scale="log", source=_source(ref),
    )  # fmt: skip
    return stat_check(
        cell, name, ACCEPT_VS_REFERENCE, est, -math.log(1 - band), alpha, alpha, numbers
    )
