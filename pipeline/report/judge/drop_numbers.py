"""The numbers of the four comparisons: a drop against a margin, and each comparison's own.

Accuracy and accept length against the baseline variant (``versus_baseline.py``) and against a
reference value (``versus_reference.py``); ``check_numbers.numbers_json`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.report.judge.check_numbers import FLAT, UNSET, Numbers, Unset


@dataclass(frozen=True)
class DropNumbers(Numbers):
    """A drop against a margin: estimate, SE, df, the one-sided bounds and the 95% interval."""

    drop: float
    se: float
    df: float
    margin: float
    alpha: float
    level: float
    ci95: list[float]
    lower: float
    upper: float


@dataclass(frozen=True)
class Dependence:
    """What a repeat is worth (``judge/dependence.py``)."""

    identical_share: float
    icc: float
    icc_ci95: list[float]
    answers_per_side: float
    effective_answers: float
    repeats_vary: bool
    questions_needed: int | None


@dataclass(frozen=True)
class AccuracyVsBaselineNumbers(DropNumbers):
    """Paired accuracy against the baseline: both accuracies, coverage, the pairing."""

    baseline: str
    baseline_folder: str
    note: str
    sequential: str
    look_level: float
    n_questions: int
    repeats: int
    n_lost: int
    n_unanswered_questions: int
    go_bound: float
    nogo_bound: float
    n_pairs: int
    coverage: str
    pairing: str
    undecided_because: str
    accuracy_baseline: float
    accuracy_candidate: float
    rates: dict[str, float] = field(metadata=FLAT)  # base_error, cand_truncated, ...
    nogo_family: int | Unset = UNSET
    earlier_runs: list[str] | Unset = UNSET
    dependence: Dependence | Unset = field(default=UNSET, metadata=FLAT)


@dataclass(frozen=True)
class AcceptVsBaselineNumbers(DropNumbers):
    """Token-weighted accept length against the baseline (log scale)."""

    baseline: str
    accept_length_baseline: float
    accept_length_candidate: float
    band: float
    n_pairs: int
    scale: str


@dataclass(frozen=True)
class AccuracyVsReferenceNumbers(DropNumbers):
    """Accuracy against a reference value and the SEs used."""

    reference: float
    reference_stderr: float
    accuracy: float
    se_run: float
    se_method: str
    n_questions: int
    repeats: int | None  # None: result.json's summary, which did not say
    source: dict[str, str] = field(metadata=FLAT)  # reference_file and the provenance
    stopped_early: str | Unset = UNSET


@dataclass(frozen=True)
class AcceptVsReferenceNumbers(DropNumbers):
    """Accept length against a reference value (log scale)."""

    reference: float
    reference_stderr: float
    accept_length: float
    band: float
    scale: str
    source: dict[str, str] = field(metadata=FLAT)
    stopped_early: str | Unset = UNSET
