"""The kinds of check a report runs: one frozen type per kind, owning what is said about it.

A kind knows its name (as ``summary.json`` writes it), its title in tables and JUnit, how its
numbers read in one line, the ``cells.csv`` columns it fills, and why a number of it can be
missing (``null`` in ``summary.json``). Its numbers are one of ``check_numbers``' types, read
here by attribute; ``verdicts.finalize`` adds the adjusted p-values beside them (``Adjusted``).
A kind reads a check through ``CheckReading`` (its verdict, message, numbers and adjusted
p-values), so this module does not import ``verdicts``, whose ``Check`` holds a kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Protocol

from pipeline.report.judge.check_numbers import (
    UNSET,
    Adjusted,
    BinRow,
    BrokenNumbers,
    ByBinNumbers,
    McNemarNumbers,
    Numbers,
    SpeedNumbers,
    Unset,
)
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
from pipeline.report.judge.parity_numbers import DivergenceNumbers, ParityNumbers, band_of

# Why a number is missing, when it is missing by design (the rest get ``UNDEFINED``).
UNDEFINED = "not a finite number: these samples do not define it"
NO_GO_TEST = "an alarm only: there is no GO test, so no GO p-value"


CsvValue = str | float | None  # a cells.csv field (ints are floats to the type checker)
CsvFields = dict[str, CsvValue]


class CheckReading(Protocol):
    """What a kind reads of a check (``verdicts.Check`` is one)."""

    verdict: str
    message: str
    numbers: Numbers
    adjusted: Adjusted | None


@dataclass(frozen=True)
class CheckKind:
    """A kind of check: status, accept metric and the kinds below without numbers of their own."""

    name: str
    title_template: str
    null_reasons: ClassVar[dict[str, str]] = {}

    def title(self, baseline: str) -> str:
        """The check's name in tables and JUnit (``{baseline}`` filled in)."""
        return self.title_template.format(baseline=baseline)

    def describe(self, check: CheckReading) -> str:
        """The check's numbers in one line; a kind without numbers shows its message."""
        return check.message

    @property
    def columns(self) -> tuple[str, ...]:
        """The ``cells.csv`` columns this kind fills (none for a kind without numbers)."""
        return ()

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """The values of ``columns`` for ``check``."""
        return {}

    def null_reason(self, key: str) -> str:
        """Why the number ``key`` is not a finite one (``summary.json`` writes it beside)."""
        return self.null_reasons.get(key, UNDEFINED)


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
            f"{f'; undecided: {why}' if why else ''}{extra_repeats(a)}{baseline_note(n.note)}"
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


@dataclass(frozen=True)
class SpeedVsBaseline(CheckKind):
    """A speed shape's slowdown against the baseline, its interval widened by the A/A band."""

    null_reasons: ClassVar[dict[str, str]] = {"aa_band": "no A/A measured this shape"}

    def describe(self, check: CheckReading) -> str:
        """Slowdown, its widened interval against the band, and what widened it."""
        n = check.numbers
        if not isinstance(n, SpeedNumbers):
            return check.message
        aa = f"A/A band {n.aa_band:.3f}" if n.aa_band else "no A/A at this shape"
        same = "; same kernels as the baseline in this phase" if n.same_kernels else ""
        # A serving level (issue 42) runs once: its interval is the A/A band alone.
        runs = "one run" if n.phase == "serving" else "the repeats' 95% bootstrap"
        return (f"time {n.slowdown:.3f}x the baseline's (ratio {n.ratio:.3f}); interval "
                f"[{n.slowdown_low:.3f}, {n.slowdown_high:.3f}] with {runs} "
                f"and the {aa}, vs band {n.max_slowdown:g}x{same}")  # fmt: skip


@dataclass(frozen=True)
class ByBin(CheckKind):
    """Paired checks per bin (context length or category), one check per cell and eval.

    ``numbers.bins`` holds a row per bin (``judge/bin_checks.py``): questions, the change
    (candidate minus baseline: points, or relative for accept length) and its one-sided bounds,
    both p-values and the bin's verdict (NO-GO Holm-corrected over the bins). The check's own
    p-values are the worst bin's (NO-GO: the smallest corrected one, GO: the largest), so that
    ``verdicts.finalize`` corrects NO-GO across cells as for the aggregate checks.
    """

    prefix: str = ""
    log_scale: bool = False

    @staticmethod
    def bin_verdict(check: CheckReading, row: BinRow) -> str:
        """A bin's verdict as shown: its NO-GO stands only when the check's, across cells, does."""
        if row.verdict == "NO-GO" and check.verdict != "NO-GO":
            return "INCONCLUSIVE"
        return row.verdict

    def describe(self, check: CheckReading) -> str:
        """Each bin's change and verdict, and the multiplicity."""
        n = check.numbers
        if not isinstance(n, ByBinNumbers):
            return check.message
        unit = "%" if self.log_scale else " pts"
        rows = "; ".join(
            f"{b.label} ({b.questions} q) {100 * b.change:+.2f}{unit} "
            f"[{100 * b.change_low:+.2f}, {100 * b.change_high:+.2f}] "
            f"{self.bin_verdict(check, b)}"
            for b in n.bins
        )
        return f"{rows}; {n.multiplicity}; {p_values(check.adjusted)}"

    @property
    def columns(self) -> tuple[str, ...]:
        """This kind's ``cells.csv`` columns: bins, NO-GO bins, the worst bin and its change."""
        fields = ("bins", "nogo_bins", "worst_bin", "worst_change")
        return tuple(f"{self.prefix}_{f}" for f in fields)

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """The bins tested, those NO-GO, and the bin with the largest drop."""
        n = check.numbers
        if not isinstance(n, ByBinNumbers) or not n.bins:
            return {}
        finite = [b for b in n.bins if math.isfinite(b.change)]
        worst = min(finite, key=lambda b: b.change) if finite else None
        nogo = "|".join(b.label for b in n.bins if self.bin_verdict(check, b) == "NO-GO")
        values: list[CsvValue] = [len(n.bins), nogo, worst.label if worst else None,
                                  worst.change if worst else None]  # fmt: skip
        return dict(zip(self.columns, values, strict=True))


@dataclass(frozen=True)
class ParityVsBaseline(CheckKind):
    """Teacher-forced logprob divergence from the baseline against a band of measured noise."""

    prefix: str = "parity"

    null_reasons: ClassVar[dict[str, str]] = {
        "upper": "fewer than two questions: no clustered bound",
        "lower": "fewer than two questions: no clustered bound",
    }

    def describe(self, check: CheckReading) -> str:
        """The divergence, its bounds against the band and what set the band."""
        n = check.numbers
        # No band (no A/A), or not paired: the message says why.
        if not isinstance(n, DivergenceNumbers) or (band := band_of(n)) is None:
            return check.message
        limit, source, why = band
        top1 = n.top1_agreement if isinstance(n, ParityNumbers) else None
        return (
            f"{n.metric} {n.divergence:.3g} per token, one-sided {100 * n.confidence:g}% "
            f"bounds [{n.lower:.3g}, {n.upper:.3g}] over {n.questions} sequences "
            f"({n.tokens} tokens) vs band {limit:.3g} ({source}: {why}); "
            f"top-1 agreement {_share(top1)}"
        )

    @property
    def columns(self) -> tuple[str, ...]:
        """``cells.csv``'s parity columns."""
        fields = ("", "_metric", "_divergence", "_upper", "_band")
        return tuple(f"{self.prefix}{f}" for f in fields)

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """Verdict, metric, divergence, upper bound and band of ``check``."""
        n = check.numbers
        if not isinstance(n, DivergenceNumbers):
            values: list[CsvValue] = [check.verdict, None, None, None, None]
        else:
            band = band_of(n)
            values = [check.verdict, n.metric, n.divergence, n.upper, band[0] if band else None]
        return dict(zip(self.columns, values, strict=True))


def _share(value: float | None) -> str:
    return "unknown" if value is None else f"{100 * value:.2f}%"


STATUS = CheckKind("status", "cell status")
ACCEPT_METRIC = CheckKind("accept_metric", "accept metric present")
ACCURACY_VS_BASELINE = AccuracyVsBaseline(
    "accuracy_vs_baseline", "accuracy vs {baseline}", prefix="vs_baseline", paired=True
)
ACCEPT_VS_BASELINE = AcceptVsBaseline(
    "accept_vs_baseline", "accept length vs {baseline}", prefix="accept_vs_baseline",
    log_scale=True, paired=True,
)  # fmt: skip
ACCURACY_VS_REFERENCE = AccuracyVsReference(
    "accuracy_vs_reference", "accuracy vs reference", prefix="vs_reference"
)
ACCEPT_VS_REFERENCE = AcceptVsReference(
    "accept_vs_reference", "accept length vs reference", prefix="accept_vs_reference",
    log_scale=True,
)  # fmt: skip
MCNEMAR = McNemar("mcnemar", "McNemar (1 repeat) vs {baseline}")
BROKEN_PROMPTS = BrokenPrompts("broken_prompts", "broken prompts vs {baseline}")
SPEED_VS_BASELINE = SpeedVsBaseline("speed_vs_baseline", "speed vs {baseline}")
PARITY_VS_BASELINE = ParityVsBaseline("parity_vs_baseline", "logprob parity vs {baseline}")
LOSSLESS = CheckKind("lossless_vs_spec_off", "greedy spec-on vs spec-off")
DECODE_PARITY = ParityVsBaseline(
    "decode_parity_vs_baseline", "decode/verify parity vs {baseline}", prefix="decode_parity"
)

ACCURACY_BY_LENGTH = ByBin(
    "accuracy_by_length", "accuracy by context length vs {baseline}", prefix="by_length"
)
ACCEPT_BY_LENGTH = ByBin(
    "accept_by_length", "accept length by context length vs {baseline}",
    prefix="accept_by_length", log_scale=True,
)  # fmt: skip
ACCURACY_BY_CATEGORY = ByBin(
    "accuracy_by_category", "accuracy by category vs {baseline}", prefix="by_category"
)
ACCEPT_BY_CATEGORY = ByBin(
    "accept_by_category", "accept length by category vs {baseline}",
    prefix="accept_by_category", log_scale=True,
)  # fmt: skip
BIN_KINDS = (ACCURACY_BY_LENGTH, ACCEPT_BY_LENGTH, ACCURACY_BY_CATEGORY, ACCEPT_BY_CATEGORY)

BASELINE_KINDS = (ACCURACY_VS_BASELINE, ACCEPT_VS_BASELINE)
REFERENCE_KINDS = (ACCURACY_VS_REFERENCE, ACCEPT_VS_REFERENCE)
STAT_KINDS = (*BASELINE_KINDS, *REFERENCE_KINDS)
KINDS = {k.name: k for k in (STATUS, ACCEPT_METRIC, *STAT_KINDS, MCNEMAR, BROKEN_PROMPTS,
                             SPEED_VS_BASELINE, PARITY_VS_BASELINE, DECODE_PARITY,
                             LOSSLESS, *BIN_KINDS)}  # fmt: skip
