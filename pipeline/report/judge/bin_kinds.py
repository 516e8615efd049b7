"""The per-bin kind: accuracy and accept length per context-length bin or category."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.report.judge.check_numbers import BinRow, ByBinNumbers
from pipeline.report.judge.describe import p_values
from pipeline.report.judge.kind_base import CheckKind, CheckReading, CsvFields, CsvValue


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
