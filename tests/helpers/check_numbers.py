"""Check numbers for tests: each kind's type with harmless defaults, the fields a test names set."""

from __future__ import annotations

from typing import Any

from pipeline.report.judge.check_numbers import (
    AcceptByBinNumbers,
    AccuracyByBinNumbers,
    BinRow,
    SpeedNumbers,
)
from pipeline.report.judge.drop_numbers import (
    AcceptVsBaselineNumbers,
    AccuracyVsBaselineNumbers,
    Dependence,
)

_DROP: dict[str, Any] = {"drop": 0.0, "se": 0.01, "df": 100.0, "margin": 0.02, "alpha": 0.05,
                         "level": 0.05, "ci95": [-0.02, 0.02], "lower": -0.02,
                         "upper": 0.02}  # fmt: skip


def dependence(**given: Any) -> Dependence:
    """What a repeat is worth: repeats vary unless ``given`` says otherwise."""
    fields: dict[str, Any] = {"identical_share": 0.5, "icc": 0.5, "icc_ci95": [0.4, 0.6],
                              "answers_per_side": 100.0, "effective_answers": 66.0,
                              "repeats_vary": True, "questions_needed": None}  # fmt: skip
    return Dependence(**(fields | given))


def accuracy_numbers(**given: Any) -> AccuracyVsBaselineNumbers:
    """An accuracy-vs-baseline check's numbers, 50 questions x 4 repeats, no errors."""
    fields: dict[str, Any] = {
        **_DROP, "baseline": "fa3", "baseline_folder": "runs/fa3", "note": "", "sequential": "",
        "look_level": 0.05, "n_questions": 50, "repeats": 4, "n_lost": 0,
        "n_unanswered_questions": 0, "go_bound": 0.02, "nogo_bound": -0.02, "n_pairs": 200,
        "coverage": "", "pairing": "by question and repeat", "undecided_because": "",
        "accuracy_baseline": 0.8, "accuracy_candidate": 0.8,
        "rates": {"base_error": 0.0, "base_truncated": 0.0, "cand_error": 0.0,
                  "cand_truncated": 0.0},
        "dependence": dependence(),
    }  # fmt: skip
    return AccuracyVsBaselineNumbers(**(fields | given))


def accept_numbers(**given: Any) -> AcceptVsBaselineNumbers:
    """An accept-length-vs-baseline check's numbers (log scale, band 5%)."""
    fields: dict[str, Any] = {**_DROP, "baseline": "fa3", "accept_length_baseline": 2.5,
                              "accept_length_candidate": 2.5, "band": 0.05, "n_pairs": 50,
                              "scale": "log"}  # fmt: skip
    return AcceptVsBaselineNumbers(**(fields | given))


def speed_numbers(**given: Any) -> SpeedNumbers:
    """A prefill 1x1024 shape's speed numbers against band 1.05x."""
    fields: dict[str, Any] = {"phase": "prefill", "batch": 1, "tokens": 1024,
                              "max_slowdown": 1.05, "slowdown": 1.0, "slowdown_low": 0.98,
                              "slowdown_high": 1.02, "ratio": 1.0, "ratio_ci95": [0.98, 1.02],
                              "aa_band": None, "same_kernels": False, "baseline": "fa3",
                              "baseline_folder": "runs/fa3"}  # fmt: skip
    return SpeedNumbers(**(fields | given))


def bin_row(label: str, change: float, verdict: str, half: float = 0.05) -> BinRow:
    """A bin of 8 questions: ``change`` +- ``half``."""
    return BinRow(label, 8, change, change - half, change + half, 0.5, 0.01, verdict)


def bin_numbers(
    rows: list[BinRow], dimension: str, accept: bool = True
) -> AcceptByBinNumbers | AccuracyByBinNumbers:
    """A by-bin check's numbers: accept length (band 5%) or accuracy (margin 2 pts)."""
    shared: dict[str, Any] = {"bins": rows, "alpha": 0.05, "multiplicity": "Holm over bins",
                              "baseline": "fa3", "dimension": dimension}  # fmt: skip
    if accept:
        return AcceptByBinNumbers(**shared, band=0.05, per_position={})
    return AccuracyByBinNumbers(**shared, margin=0.02)
