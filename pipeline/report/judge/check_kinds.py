"""The kinds of check a report runs, one registry: every kind by name (``KINDS``) and the families.

Each kind is a frozen type owning what is said about it: its name (as ``summary.json`` writes
it), its title in tables and JUnit, how its numbers read in one line, the ``cells.csv`` columns
it fills, and why a number of it can be missing (``null`` in ``summary.json``). The types live
by family: ``kind_base`` (``CheckKind``, ``CheckReading``), ``comparison_kinds`` (the
statistical ones), ``band_kinds`` (speed and parity, against a band of measured noise) and
``bin_kinds`` (per bin); this module names the kinds and is the one place callers import them
from.
"""

from __future__ import annotations

from pipeline.report.judge.band_kinds import ParityVsBaseline, SpeedVsBaseline
from pipeline.report.judge.bin_kinds import ByBin
from pipeline.report.judge.comparison_kinds import (
    AcceptVsBaseline,
    AcceptVsReference,
    AccuracyVsBaseline,
    AccuracyVsReference,
    BrokenPrompts,
    Comparison,
    McNemar,
)
from pipeline.report.judge.kind_base import (
    NO_GO_TEST,
    UNDEFINED,
    CheckKind,
    CheckReading,
    CsvFields,
    CsvValue,
)

# The types are re-exported: callers import every kind, and what a kind is, from here.
__all__ = [
    "NO_GO_TEST", "UNDEFINED", "AcceptVsBaseline", "AcceptVsReference", "AccuracyVsBaseline",
    "AccuracyVsReference", "BrokenPrompts", "ByBin", "CheckKind", "CheckReading", "Comparison",
    "CsvFields", "CsvValue", "McNemar", "ParityVsBaseline", "SpeedVsBaseline",
]  # fmt: skip

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
