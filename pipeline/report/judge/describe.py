"""The phrases a check's one-line description is built of (``check_kinds`` puts them together).

Each takes the check's ``numbers``; none knows which kind of check it describes.
"""

from __future__ import annotations

import math
from typing import Any


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


def p_values(n: dict[str, Any]) -> str:
    """Both adjusted p-values, and the multiplicity correction they went through."""
    adjusted = n.get("family_size", 1) > 1
    tag = f" (NO-GO Holm over {n['family_size']} cells; GO per cell)" if adjusted else ""
    if (n.get("nogo_family") or 1) > 1:  # a sequential candidate: the split its looks used
        family = n["nogo_family"]
        tag = f" (NO-GO Bonferroni over the sweep's {family} checks, as its looks; GO per cell)"
    return (
        f"p(GO) {n.get('p_go_adjusted', float('nan')):.3g}, "
        f"p(NO-GO) {n.get('p_nogo_adjusted', float('nan')):.3g}{tag}"
    )


def error_rates(n: dict[str, Any]) -> str:
    """Error and truncation rates of both sides (an errored request is no answer)."""
    return (
        f"errors {100 * n.get('base_error', 0):.1f}% baseline / {100 * n.get('cand_error', 0):.1f}%"
        f" candidate (no answer), truncated {100 * n.get('base_truncated', 0):.1f}% / "
        f"{100 * n.get('cand_truncated', 0):.1f}% (counted wrong)" + aborted_note(n)
    )


def aborted_note(n: dict[str, Any]) -> str:
    """``; aborted B / C (...)`` when a side had aborted replies, else nothing."""
    if not (n.get("base_aborted") or n.get("cand_aborted")):
        return ""
    return (
        f"; aborted {n.get('base_aborted', 0)} / {n.get('cand_aborted', 0)} replies "
        "(retried or counted as errors, never graded)"
    )


def drop_bounds(n: dict[str, Any]) -> str:
    """The bounds the verdict reads, and the answered pairs' own when some pairs lack answers.

    The verdict's bounds use the SE where each test's null holds, so they sit against the margin
    exactly as the verdict does; checks written before them show the answered pairs' bounds.
    """
    answered = f"[{pts(n['lower'])}, {pts(n['upper'])}]"
    if "go_bound" not in n:
        return answered
    verdict = f"[{pts(n['nogo_bound'])}, {pts(n['go_bound'])}]"
    if not (n.get("n_lost") or n.get("n_unanswered_questions")):
        return verdict
    return (
        f"{verdict} with what has no answer counted right (NO-GO's) / wrong (GO's); answered "
        f"pairs alone {answered}"
    )


def extra_repeats(n: dict[str, Any]) -> str:
    """How many more repeats would likely decide an undecided check (empty when not sized)."""
    if "extra_repeats" not in n:
        return ""
    extra = n["extra_repeats"]
    if extra is None:
        return "; repeats alone would not decide it (more questions, or a wider margin)"
    if extra > 99:
        return "; more than 99 more repeats (the estimate sits almost on the margin)"
    return f"; about {extra} more repeats would likely decide it"


def baseline_note(n: dict[str, Any]) -> str:
    """Which baseline folder was used, when that needs saying (empty otherwise)."""
    # Which baseline folder was used when several match, or why another one was.
    return f"; baseline: {n['note']}" if n.get("note") else ""
