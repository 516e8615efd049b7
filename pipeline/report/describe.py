"""One-line descriptions of checks with their numbers (report tables, JUnit failure messages)."""

from __future__ import annotations

import math
from typing import Any

from pipeline.report.verdicts import Check


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


def _p(n: dict[str, Any]) -> str:
    adjusted = n.get("family_size", 1) > 1
    tag = f" (NO-GO Holm over {n['family_size']} cells; GO per cell)" if adjusted else ""
    if (n.get("nogo_family") or 1) > 1:  # a sequential candidate: the split its looks used
        family = n["nogo_family"]
        tag = f" (NO-GO Bonferroni over the sweep's {family} checks, as its looks; GO per cell)"
    return (
        f"p(GO) {n.get('p_go_adjusted', float('nan')):.3g}, "
        f"p(NO-GO) {n.get('p_nogo_adjusted', float('nan')):.3g}{tag}"
    )


def _rates(n: dict[str, Any]) -> str:
    """Error and truncation rates of both sides (an errored request is no answer)."""
    return (
        f"errors {100 * n.get('base_error', 0):.1f}% baseline / {100 * n.get('cand_error', 0):.1f}%"
        f" candidate (no answer), truncated {100 * n.get('base_truncated', 0):.1f}% / "
        f"{100 * n.get('cand_truncated', 0):.1f}% (counted wrong)"
    )


def _bounds(n: dict[str, Any]) -> str:
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


def _extra(n: dict[str, Any]) -> str:
    if "extra_repeats" not in n:
        return ""
    extra = n["extra_repeats"]
    if extra is None:
        return "; repeats alone would not decide it (more questions, or a wider margin)"
    if extra > 99:
        return "; more than 99 more repeats (the estimate sits almost on the margin)"
    return f"; about {extra} more repeats would likely decide it"


def _baseline_note(n: dict[str, Any]) -> str:
    # Which baseline folder was used when several match, or why another one was.
    return f"; baseline: {n['note']}" if n.get("note") else ""


def describe(check: Check) -> str:
    """The check's numbers in one line (or its message when it has none)."""
    n = check.numbers
    kind = check.kind
    if kind == "accuracy_vs_baseline" and "drop" in n:
        seq = f", {n['sequential']}" if n.get("sequential") else ""
        why = n.get("undecided_because") if check.verdict == "INCONCLUSIVE" else ""
        return (
            f"accuracy {n['accuracy_candidate']:.4f} vs {n['accuracy_baseline']:.4f} "
            f"(change {pts(-n['drop'], True)} pts); drop {pts(n['drop'])} pts, one-sided "
            f"{100 * (1 - n['alpha']):g}% bounds {_bounds(n)} vs "
            f"margin {pts(n['margin'])} pts; {_p(n)}; {n['n_questions']} questions x "
            f"{n['repeats']} repeats{seq}; {_rates(n)}; {n.get('coverage', '')}"
            f"{f'; undecided: {why}' if why else ''}{_extra(n)}{_baseline_note(n)}"
        )
    if kind == "broken_prompts" and "p" in n:
        ids = n["broken_questions"]
        found = f"{len(ids)} broken: {', '.join(ids[:20])}" + ("..." if len(ids) > 20 else "")
        return (
            f"{found if ids else 'no question broke'} (questions {n['baseline']} gets right in "
            f"most repeats and the candidate in none; one-sided Fisher exact tests, Bonferroni "
            f"over the {n['testable']} questions that could break (Tarone)); p {n['p']:.3g}"
            f", adjusted {n.get('p_nogo_adjusted', float('nan')):.3g}"
        )
    if kind == "accept_vs_baseline" and "drop" in n:
        return (
            f"accept length {n['accept_length_candidate']:.3f} vs "
            f"{n['accept_length_baseline']:.3f} (relative drop {100 * rel(n['drop']):.2f}%, "
            f"bounds [{100 * rel(n['lower']):.2f}%, {100 * rel(n['upper']):.2f}%] vs band "
            f"{100 * n['band']:g}%); {_p(n)}; {n['n_pairs']} paired prompts"
        )
    if kind == "accuracy_vs_reference" and "drop" in n:
        return (
            f"accuracy {n['accuracy']:.4f} vs reference {n['reference']:.4f} "
            f"({n['source']}, {n['date']}); drop {pts(n['drop'])} pts, bounds "
            f"[{pts(n['lower'])}, {pts(n['upper'])}] vs margin {pts(n['margin'])} pts; SE "
            f"{pts(n['se'])} pts ({n['se_method']}, reference {pts(n['reference_stderr'])})"
            f"; {_p(n)}{_extra(n)}"
            + (f"; not decided: {n['stopped_early']}" if check.verdict == "INFO" else "")
        )
    if kind == "accept_vs_reference" and "drop" in n:
        return (
            f"accept length {n['accept_length']:.3f} vs reference {n['reference']:.3f} "
            f"({n['source']}); relative drop {100 * rel(n['drop']):.2f}%, bounds "
            f"[{100 * rel(n['lower']):.2f}%, {100 * rel(n['upper']):.2f}%] vs band "
            f"{100 * n['band']:g}%; {_p(n)}"
            + (f"; not decided: {n['stopped_early']}" if check.verdict == "INFO" else "")
        )
    if kind == "mcnemar":
        return (
            f"discordant questions: {n['b']} right only on the baseline, {n['c']} only on the "
            f"candidate; exact one-sided p = {n['p']:.3g} for 'the candidate is worse' "
            "(secondary: tests no difference, not the margin)"
        )
    return check.message
