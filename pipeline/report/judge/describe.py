"""The phrases a check's one-line description is built of (``check_kinds`` puts them together).

Each takes the part of a check's numbers it phrases.
"""

from __future__ import annotations

import math

from pipeline.report.judge.check_numbers import UNSET, Adjusted, Unset
from pipeline.report.judge.drop_numbers import AccuracyVsBaselineNumbers

NAN = float("nan")


def pts(x: float | None, signed: bool = False) -> str:
    """A fraction as points: 0.0213 -> '2.13'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    value = 100 * x + 0.0  # + 0.0 turns -0.0 into 0.0
    if abs(value) < 0.005:
        value = 0.0
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def rel(log_drop: float) -> float:
    """A drop on the log scale as a relative drop: log(a/b) -> 1 - b/a."""
    return 1 - math.exp(-log_drop)


def p_values(adjusted: Adjusted | None, nogo_family: int = 1) -> str:
    """Both adjusted p-values, and the multiplicity correction they went through."""
    size = adjusted.family_size if adjusted else 1
    tag = f" (NO-GO Holm over {size} cells; GO per cell)" if size > 1 else ""
    if nogo_family > 1:  # a sequential candidate: the split its looks used
        tag = (
            f" (NO-GO Bonferroni over the sweep's {nogo_family} checks, as its looks; GO per cell)"
        )
    p_go, p_nogo = (adjusted.p_go_adjusted, adjusted.p_nogo_adjusted) if adjusted else (NAN, NAN)
    return f"p(GO) {p_go:.3g}, p(NO-GO) {p_nogo:.3g}{tag}"


def error_rates(rates: dict[str, float]) -> str:
    """Error and truncation rates of both sides (an errored request is no answer)."""
    base, cand = rates.get("base_error", 0), rates.get("cand_error", 0)
    return (
        f"errors {100 * base:.1f}% baseline / {100 * cand:.1f}%"
        f" candidate (no answer), truncated {100 * rates.get('base_truncated', 0):.1f}% / "
        f"{100 * rates.get('cand_truncated', 0):.1f}% (counted wrong)" + aborted_note(rates)
    )


def aborted_note(rates: dict[str, float]) -> str:
    """``; aborted B / C (...)`` when a side had aborted replies, else nothing."""
    if not (rates.get("base_aborted") or rates.get("cand_aborted")):
        return ""
    return (
        f"; aborted {rates.get('base_aborted', 0)} / {rates.get('cand_aborted', 0)} replies "
        "(retried or counted as errors, never graded)"
    )


def drop_bounds(n: AccuracyVsBaselineNumbers) -> str:
    """The bounds the verdict reads, and the answered pairs' own when some pairs lack answers.

    The verdict's bounds use the SE where each test's null holds, so they sit against the margin
    exactly as the verdict does; the answered pairs' own bounds are said beside when some pairs
    lack answers.
    """
    answered = f"[{pts(n.lower)}, {pts(n.upper)}]"
    verdict = f"[{pts(n.nogo_bound)}, {pts(n.go_bound)}]"
    if not (n.n_lost or n.n_unanswered_questions):
        return verdict
    return (
        f"{verdict} with what has no answer counted right (NO-GO's) / wrong (GO's); answered "
        f"pairs alone {answered}"
    )


def extra_repeats(adjusted: Adjusted | None) -> str:
    """How many more repeats would likely decide an undecided check (empty when not sized)."""
    if adjusted is None or adjusted.extra_repeats is UNSET:
        return ""
    extra = adjusted.extra_repeats
    if extra is None:
        return "; repeats alone would not decide it (more questions, or a wider margin)"
    if extra > 99:
        return "; more than 99 more repeats (the estimate sits almost on the margin)"
    return f"; about {extra} more repeats would likely decide it"


def baseline_note(note: str) -> str:
    """Which baseline folder was used, when several match, or why another one was ('' else)."""
    return f"; baseline: {note}" if note else ""


def spread_note(n: AccuracyVsBaselineNumbers, extra: int | Unset | None, eval_name: str) -> str:
    """Why an accuracy check with no other reason is undecided, and what to raise.

    Its one-sided bounds straddle the margin: the questions and repeats it ran measure the drop
    too loosely to place it on either side. ``extra``: ``Adjusted.extra_repeats``.
    """
    bounds = f"[{pts(n.nogo_bound)}, {pts(n.go_bound)}]"
    if not n.nogo_bound <= n.margin < n.go_bound:
        return (
            f"its bounds {bounds} pts clear the {pts(n.margin)}-pt margin at the plain level, not "
            "at the one its p-values are read at (Holm across cells, NO-GO's alpha split with "
            "broken prompts, or a sequential look's): more questions or repeats would"
        )
    return (
        f"its one-sided bounds {bounds} pts straddle the {pts(n.margin)}-pt margin: "
        f"{n.n_questions} questions x {n.repeats} repeat{'s' * (n.repeats != 1)} are too few to "
        "place the drop; " + _what_to_raise(n, extra, eval_name)
    )


def _what_to_raise(n: AccuracyVsBaselineNumbers, extra: int | Unset | None, eval_name: str) -> str:
    needed = None if n.dependence is UNSET else n.dependence.questions_needed
    questions = f"about {needed} questions" if needed else "more questions"
    wider = "or a wider margin (the policy's max_drop)"
    if extra is UNSET:  # not sized: the pairs are not by repeat
        return f"more questions or repeats narrow it, {wider}"
    if extra is None or extra > 99:
        return f"more repeats would not decide it, {questions} would, {wider}"
    total = n.repeats + extra
    return f"raise the repeats to about {total} (evals.{eval_name}.repeats={total}), or {questions}"
