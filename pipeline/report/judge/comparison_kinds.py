"""The statistical kinds: the four comparisons, McNemar and broken prompts.

The comparisons are accuracy and accept length, each against the baseline or a reference value.

Their numbers are ``drop_numbers``' and ``check_numbers``' types, read here by attribute;
``verdicts.finalize`` adds the adjusted p-values beside them (``Adjusted``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from pipeline.report.judge.check_numbers import UNSET, BrokenNumbers, McNemarNumbers, Unset
from pipeline.report.judge.describe import (
    baseline_note,
    drop_bounds,
    error_rates,
    extra_repeats,
    p_values,
    pts,
    rel,
)
from pipeline.report.judge.drop_numbers import (
    AcceptVsBaselineNumbers,
    AcceptVsReferenceNumbers,
    AccuracyVsBaselineNumbers,
    AccuracyVsReferenceNumbers,
    DropNumbers,
)
from pipeline.report.judge.kind_base import (
    NO_GO_TEST,
    CheckKind,
    CheckReading,
    CsvFields,
    CsvValue,
)

_ACCEPT = (AcceptVsBaselineNumbers, AcceptVsReferenceNumbers)
_ACCURACY = (AccuracyVsBaselineNumbers, AccuracyVsReferenceNumbers)
_FIELDS = ("change", "lower", "upper", "margin", "p_go", "p_nogo", "repeats")
_SIDES = ("baseline_error_rate", "candidate_error_rate")


@dataclass(frozen=True)
class Comparison(CheckKind):
    """A statistical check: a drop, its one-sided bounds against a margin, two p-values.

    Its ``cells.csv`` columns are ``<prefix>_<field>``: the change (candidate minus baseline or
    reference; relative for accept length), the one-sided bounds of the change the verdict
    reads, the margin (the largest drop allowed), the adjusted p-values and the repeats, and for
    a comparison against the baseline both sides' error rates.
    """

    prefix: str = ""
    log_scale: bool = False
    paired: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        """This kind's ``cells.csv`` columns."""
        fields = _FIELDS + (_SIDES if self.paired else ())
        return tuple(f"{self.prefix}_{f}" for f in fields)

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """Change, bounds, margin, p-values, repeats (and error rates) of ``check``."""
        n, a = check.numbers, check.adjusted
        if not isinstance(n, DropNumbers):
            return {}
        if isinstance(n, AccuracyVsBaselineNumbers):
            low, high = n.go_bound, n.nogo_bound
        else:
            low, high = n.upper, n.lower
        values: list[CsvValue] = [self._change(n.drop), self._change(low), self._change(high)]
        margin = n.band if isinstance(n, _ACCEPT) else n.margin
        repeats = n.repeats if isinstance(n, _ACCURACY) else None
        p_go, p_nogo = (a.p_go_adjusted, a.p_nogo_adjusted) if a else (None, None)
        values += [margin, p_go, p_nogo, repeats]
        if self.paired:
            rates = n.rates if isinstance(n, AccuracyVsBaselineNumbers) else {}
            values += [rates.get("base_error"), rates.get("cand_error")]
        return dict(zip(self.columns, values, strict=True))

    def _change(self, drop: float) -> float:
        # A drop on the accept scale is log(a/b): its change is the relative one, b/a - 1.
        return -rel(drop) if self.log_scale else -drop


@dataclass(frozen=True)
class AccuracyVsBaseline(Comparison):
    """Paired non-inferiority of accuracy against the baseline variant."""

    def describe(self, check: CheckReading) -> str:
        """Accuracies, change, bounds against the margin, p-values, coverage, what is missing."""
        n, a = check.numbers, check.adjusted
        if not isinstance(n, AccuracyVsBaselineNumbers):
            return check.message
        seq = f", {n.sequential}" if n.sequential else ""
        why = n.undecided_because if check.verdict == "INCONCLUSIVE" else ""
        family = 1 if n.nogo_family is UNSET else n.nogo_family or 1
        return (
            f"accuracy {n.accuracy_candidate:.4f} vs {n.accuracy_baseline:.4f} "
            f"(change {pts(-n.drop, True)} pts); drop {pts(n.drop)} pts, one-sided "
            f"{100 * (1 - n.alpha):g}% bounds {drop_bounds(n)} vs "
            f"margin {pts(n.margin)} pts; {p_values(a, family)}; {n.n_questions} questions x "
            f"{n.repeats} repeats{seq}; {error_rates(n.rates)}; {n.coverage}"
            # A reason already says what would decide it (repeats, questions, errors, a rerun).
            f"{f'; undecided: {why}' if why else extra_repeats(a)}{baseline_note(n.note)}"
        )


@dataclass(frozen=True)
class AcceptVsBaseline(Comparison):
    """Token-weighted accept length against the baseline variant, paired by prompt."""

    def describe(self, check: CheckReading) -> str:
        """Both accept lengths, the relative drop and its bounds against the band."""
        n = check.numbers
        if not isinstance(n, AcceptVsBaselineNumbers):
            return check.message
        return (
            f"accept length {n.accept_length_candidate:.3f} vs "
            f"{n.accept_length_baseline:.3f} (relative drop {100 * rel(n.drop):.2f}%, "
            f"bounds [{100 * rel(n.lower):.2f}%, {100 * rel(n.upper):.2f}%] vs band "
            f"{100 * n.band:g}%); {p_values(check.adjusted)}; {n.n_pairs} paired prompts"
        )


def _not_decided(check: CheckReading, stopped: str | Unset) -> str:
    # A sequentially stopped GO cell's reference check is shown, not counted (INFO).
    if check.verdict != "INFO" or stopped is UNSET:
        return ""
    return f"; not decided: {stopped}"


@dataclass(frozen=True)
class AccuracyVsReference(Comparison):
    """Accuracy against a reference value, from the run's variance and the reference's SE."""

    def describe(self, check: CheckReading) -> str:
        """Accuracy against the reference, bounds against the margin, the SEs used."""
        n, a = check.numbers, check.adjusted
        if not isinstance(n, AccuracyVsReferenceNumbers):
            return check.message
        return (
            f"accuracy {n.accuracy:.4f} vs reference {n.reference:.4f} "
            f"({n.source['source']}, {n.source['date']}); drop {pts(n.drop)} pts, bounds "
            f"[{pts(n.lower)}, {pts(n.upper)}] vs margin {pts(n.margin)} pts; SE "
            f"{pts(n.se)} pts ({n.se_method}, reference {pts(n.reference_stderr)})"
            f"; {p_values(a)}{extra_repeats(a)}{_not_decided(check, n.stopped_early)}"
        )


@dataclass(frozen=True)
class AcceptVsReference(Comparison):
    """Accept length against a reference value (log scale)."""

    def describe(self, check: CheckReading) -> str:
        """Accept length against the reference, the relative drop and its bounds."""
        n = check.numbers
        if not isinstance(n, AcceptVsReferenceNumbers):
            return check.message
        return (
            f"accept length {n.accept_length:.3f} vs reference {n.reference:.3f} "
            f"({n.source['source']}); relative drop {100 * rel(n.drop):.2f}%, bounds "
            f"[{100 * rel(n.lower):.2f}%, {100 * rel(n.upper):.2f}%] vs band "
            f"{100 * n.band:g}%; {p_values(check.adjusted)}{_not_decided(check, n.stopped_early)}"
        )


@dataclass(frozen=True)
class McNemar(CheckKind):
    """Exact McNemar on the discordant questions (one repeat only; secondary)."""

    def describe(self, check: CheckReading) -> str:
        """The discordant counts and the exact one-sided p-value."""
        n = check.numbers
        if not isinstance(n, McNemarNumbers):
            return check.message
        return (
            f"discordant questions: {n.b} right only on the baseline, {n.c} only on the "
            f"candidate; exact one-sided p = {n.p:.3g} for 'the candidate is worse' "
            "(secondary: tests no difference, not the margin)"
        )


@dataclass(frozen=True)
class BrokenPrompts(CheckKind):
    """Questions the baseline gets right in most repeats and the candidate in none."""

    null_reasons: ClassVar[dict[str, str]] = {"p_go_adjusted": NO_GO_TEST}

    def describe(self, check: CheckReading) -> str:
        """The broken questions found, the test and its p-values."""
        n = check.numbers
        if not isinstance(n, BrokenNumbers):
            return check.message
        ids = n.broken_questions
        found = f"{len(ids)} broken: {', '.join(ids[:20])}" + ("..." if len(ids) > 20 else "")
        adjusted = check.adjusted.p_nogo_adjusted if check.adjusted else math.nan
        return (
            f"{found if ids else 'no question broke'} (questions {n.baseline} gets right in "
            f"most repeats and the candidate in none, against the mirror pattern: an exact "
            f"sign test over questions, a question counted once whatever its repeats; "
            f"{n.testable} questions could show either); p {n.p:.3g}"
            f", adjusted {adjusted:.3g}"
        )
