"""A candidate against the baseline variant, paired by (question, repeat).

Accuracy (per-question mean differences, clustered SE), exact McNemar with one repeat, and the
token-weighted accept length (log ratio, clustered by question).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from pipeline.report.judge.accept_pairing import accept_pairs
from pipeline.report.judge.bin_checks import bin_checks
from pipeline.report.judge.check_kinds import (
    ACCEPT_VS_BASELINE,
    ACCURACY_VS_BASELINE,
    BROKEN_PROMPTS,
    MCNEMAR,
)
from pipeline.report.judge.check_numbers import UNSET, BrokenNumbers, McNemarNumbers
from pipeline.report.judge.dependence import dependence_numbers
from pipeline.report.judge.describe import pts
from pipeline.report.judge.drop_numbers import AcceptVsBaselineNumbers, AccuracyVsBaselineNumbers
from pipeline.report.judge.pairing import Paired, SampleReader, Samples, pair_samples
from pipeline.report.judge.stopped_cells import (
    Look,
    anytime_p,
    broken_reading,
    look_words,
    nogo_split_of,
    sequential_look,
)
from pipeline.report.judge.verdicts import (
    ERROR,
    INCONCLUSIVE,
    INFO,
    NO_BASELINE,
    Check,
    Estimate,
    make_check,
    stat_check,
)
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.reruns import earlier_runs, rerun_note
from pipeline.report.load.samples import SampleError
from pipeline.report.load.tolerance import EvalTolerance
from pipeline.stats.clustered import log_ratio_se
from pipeline.stats.mcnemar import discordant_counts, mcnemar_exact
from pipeline.stats.nogo_split import on_family_scale
from pipeline.stats.power import variance_components
from pipeline.stats.sequential import level_at
from pipeline.stats.sequential_pvalues import stagewise
from pipeline.stats.signoff import Evidence, accuracy_evidence, broken_prompts

ACC = ACCURACY_VS_BASELINE


def baseline_checks(
    cell: CellRecord, base: CellRecord | None, note: str, name: str, margins: EvalTolerance,
    alpha: float, read: SampleReader,
) -> list[Check]:  # fmt: skip
    """Accuracy (broken prompts, McNemar, accept length) of ``cell`` against its baseline."""
    if base is None:
        return [make_check(cell, name, ACC, NO_BASELINE, note)]
    if name not in base.evals:
        return [make_check(cell, name, ACC, NO_BASELINE, f"{base.label} has no eval {name}")]
    try:
        b_samples, c_samples = read(base, name), read(cell, name)
    except SampleError as err:
        return [make_check(cell, name, ACC, ERROR, str(err))]
    paired = pair_samples(b_samples, c_samples)
    if not paired.outcomes.cand_asked.any():
        message = f"no question in common with baseline {base.folder or base.label}"
        return [make_check(cell, name, ACC, ERROR, message)]
    out: list[Check] = []
    # An ungraded eval (MT-Bench-style, for accept rates) has no accuracy to compare.
    if cell.evals[name].graded:
        look = sequential_look(cell.evals[name])
        out.append(accuracy_check(cell, base, note, name, margins, alpha, look, paired))
        out.append(broken_check(cell, base, name, alpha, look, paired))
    if paired.repeats == 1 and out:
        flat_b, flat_c = paired.flat()
        b, c = discordant_counts(flat_b.astype(bool), flat_c.astype(bool))
        out.append(
            make_check(cell, name, MCNEMAR, INFO, "", McNemarNumbers(b, c, mcnemar_exact(b, c)))
        )
    if cell.speculative and base.speculative:
        out.append(accept_check(cell, base, name, margins.accept_band, alpha, b_samples, c_samples))
    out += bin_checks(cell, base, name, margins, alpha, (b_samples, c_samples), paired)
    return out


def _coverage(paired: Paired, ev: Evidence) -> str:
    n = len(paired.questions)
    parts = [f"{int(ev.n_paired)} of {n} baseline questions paired ({paired.pairing})"]
    if ev.n_unanswered:
        parts.append(f"{int(ev.n_unanswered)} without an answered pair, taken at their worst")
    if ev.n_lost:
        parts.append(f"{int(ev.n_lost)} pairs the candidate's request errored on, counted wrong "
                     "for GO and right for NO-GO")  # fmt: skip
    if ev.n_absent:
        parts.append(f"{int(ev.n_absent)} never asked of the candidate")
    if paired.extra_questions:
        parts.append(f"{paired.extra_questions} only the candidate has (left out)")
    return "; ".join(parts)


def _why_undecided(
    ev: Evidence, margins: EvalTolerance, n: int, alpha: float, nogo_alpha: float
) -> str:
    # Read only when the verdict is INCONCLUSIVE: what stopped it from being decided.
    if not ev.n_paired >= 2:
        return f"only {int(ev.n_paired)} paired question(s): no verdict"
    if not np.isfinite(ev.se):
        return "the standard error is not finite: no verdict"
    if ev.n_absent > margins.max_absent_questions * n + 1e-9:
        allowed = 100 * margins.max_absent_questions
        return (
            f"{int(ev.n_absent)} of the baseline's {n} questions were never asked of the "
            f"candidate (policy max_absent_questions allows {allowed:g}%): never GO"
        )
    decided = errors_decided(ev, alpha, nogo_alpha)
    if decided:
        return decided
    if ev.n_unanswered:
        return (
            f"{int(ev.n_unanswered)} questions without an answered pair could move the "
            f"drop by up to {pts(float(ev.worst_shift))} pts"
        )
    return ""


def errors_decided(ev: Evidence, alpha: float, nogo_alpha: float | None = None) -> str:
    """Why the candidate's errored requests alone keep a verdict from being reached, or ''.

    GO's p-values are read at ``alpha``, NO-GO's at ``nogo_alpha`` (the mean test's share of
    the cell's NO-GO alpha; ``alpha`` when not given).
    """
    nogo_alpha = alpha if nogo_alpha is None else nogo_alpha
    if not ev.n_lost:
        return ""
    lost = f"the candidate's {int(ev.n_lost)} errored requests on pairs the baseline answered"
    if ev.p_go_answered <= alpha < ev.p_go:
        return (
            f"errors decided it: on answered pairs alone GO, but with {lost} counted wrong the "
            f"drop's upper bound is {pts(float(ev.go_bound))} pts (rerun the errored requests)"
        )
    if ev.p_nogo_answered <= nogo_alpha < ev.p_nogo:
        return (
            f"errors decided it: on answered pairs alone NO-GO, but with {lost} counted right "
            f"the drop's lower bound is {pts(float(ev.nogo_bound))} pts"
        )
    return ""


def accuracy_check(
    cell: CellRecord, base: CellRecord, note: str, name: str, margins: EvalTolerance,
    alpha: float, look: Look, paired: Paired,
) -> Check:  # fmt: skip
    """Paired non-inferiority of accuracy on answered pairs (``pipeline.stats.signoff``).

    A candidate of the anytime design is read through the anytime p-values its looks stopped on
    (``anytime_evidence`` of the same pairs, ``anytime_p``); one of the group-sequential design
    through its stagewise p-values, which are <= alpha exactly when its look stopped it.
    """
    null = look is None or look[0].statistic != "observed"  # as the cell's looks read it
    ev = accuracy_evidence(
        paired.outcomes, margins.max_drop, alpha, margins.max_absent_questions, null
    )
    drop, se, df = float(ev.drop), float(ev.se), float(ev.df)
    b_flat, c_flat = paired.flat()
    anytime = look is not None and look[0].statistic == "eprocess"
    level = level_at(look[0].side(True), look[1]) if look and not anytime else alpha
    mean_share = nogo_split_of(look)[0]
    why = _why_undecided(ev, margins, len(paired.questions), level, level * mean_share)
    numbers = partial(
        AccuracyVsBaselineNumbers, baseline=base.label,
        baseline_folder=str(base.folder or base.id), note=note, sequential=look_words(look),
        look_level=level, n_questions=int(ev.n_paired),
        repeats=paired.repeats, n_lost=int(ev.n_lost),
        n_unanswered_questions=int(ev.n_unanswered), go_bound=float(ev.go_bound),
        nogo_bound=float(ev.nogo_bound), n_pairs=int(b_flat.size), coverage=_coverage(paired, ev),
        pairing=paired.pairing, undecided_because=why,
        accuracy_baseline=float(b_flat.mean()) if b_flat.size else math.nan,
        accuracy_candidate=float(c_flat.mean()) if c_flat.size else math.nan, rates=paired.rates,
        dependence=dependence_numbers(paired, margins.max_drop, alpha),
    )  # fmt: skip
    runs = earlier_runs(cell.folder, name) if look is None else []
    if look:
        numbers = partial(numbers, nogo_family=look[0].family)
    if runs:
        numbers = partial(numbers, undecided_because=rerun_note(runs, paired.repeats),
                          earlier_runs=runs)  # fmt: skip
    est = Estimate(drop, se, max(df, 1.0))
    check = stat_check(cell, name, ACC, est, margins.max_drop, alpha, alpha, numbers)
    check.p_go, check.p_nogo = float(ev.p_go), float(ev.p_nogo)
    if look and anytime:
        check.p_go, check.p_nogo = anytime_p(paired, margins, look[0])
    elif look:
        design, j = look
        check.p_go = float(stagewise(design.side(True), j, np.asarray(ev.p_go)))
        check.p_nogo = float(stagewise(design.side(False), j, np.asarray(ev.p_nogo)))
    # The mean test's NO-GO has its share of the cell's NO-GO alpha (the broken check the rest).
    check.p_nogo = float(on_family_scale(check.p_nogo, mean_share))
    if runs:
        check.p_go = check.p_nogo = 1.0  # a fixed design rerun until it decides: no verdict
    if paired.outcomes.by_repeat:
        check.components = variance_components(paired.diffs)
    return check


def broken_check(
    cell: CellRecord, base: CellRecord, name: str, alpha: float, look: Look, paired: Paired
) -> Check:
    """Questions the baseline gets right in most repeats and the candidate never."""
    found = broken_prompts(paired.outcomes, alpha)
    if not found.testable or ((found.p_question >= 1).all() and paired.repeats < 2):
        message = "too few repeats for any question to show a break (needs several repeats)"
        return make_check(cell, name, BROKEN_PROMPTS, INFO, message)
    if paired.repeats > 1 and not found.repeats_vary:
        message = (
            "every question's repeats are identical on both sides (greedy decoding): a question "
            "is one answer, too few for a per-question test; the accuracy check decides"
        )
        return make_check(cell, name, BROKEN_PROMPTS, INFO, message)
    level, p = broken_reading(paired, float(found.p_cell), alpha, look)
    flagged = found.flagged(level)
    ids = [q for q, f in zip(paired.questions, flagged, strict=True) if f]
    numbers = BrokenNumbers(int(found.testable), ids, float(found.p_cell), base.label,
                            look[0].family if look else UNSET)  # fmt: skip
    check = make_check(cell, name, BROKEN_PROMPTS, INCONCLUSIVE, "", numbers)
    check.p_go, check.p_nogo, check.level = math.nan, float(p), alpha
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
        return make_check(cell, name, ACCEPT_VS_BASELINE, ERROR, message)
    al_base, al_cand = float(cb.sum() / vb.sum()), float(cc.sum() / vc.sum())
    se = log_ratio_se([cc, vb], [vc, cb], clusters) or 0.0
    est = Estimate(math.log(al_base / al_cand), se, groups - 1)
    numbers = partial(
        AcceptVsBaselineNumbers, baseline=base.label, accept_length_baseline=al_base,
        accept_length_candidate=al_cand, band=band, n_pairs=len(clusters), scale="log",
    )  # fmt: skip
    return stat_check(
        cell, name, ACCEPT_VS_BASELINE, est, -math.log(1 - band), alpha, alpha, numbers
    )
