"""What the report writes of a by-bin check: MLflow keys, shown verdicts, the frontier cell."""

from __future__ import annotations

import math

from pipeline.report.judge.check_kinds import ACCEPT_BY_LENGTH, ACCURACY_BY_CATEGORY, ByBin
from pipeline.report.judge.check_numbers import BinRow
from pipeline.report.judge.verdicts import Check
from pipeline.report.write.bin_tables import _bin_verdicts, bin_metrics, metric_key
from tests.helpers.check_numbers import bin_numbers
from tests.helpers.check_numbers import bin_row as _row


def _check(verdict: str, rows: list[BinRow], kind: ByBin = ACCEPT_BY_LENGTH) -> Check:
    dimension = "length" if kind is ACCEPT_BY_LENGTH else "category"
    numbers = bin_numbers(rows, dimension, accept=kind.log_scale)
    return Check("c", "c", "longctx_vt", kind, verdict, "", numbers)


def test_bin_labels_become_mlflow_keys_and_nan_changes_are_left_out() -> None:
    assert [metric_key(x) for x in ("<=4k", "4k-8k", ">128k", "q&a")] == [
        "le4k", "4k-8k", "gt128k", "q_a"]  # fmt: skip
    found = bin_metrics(_check("NO-GO", [_row("<=4k", 0.01, "GO"), _row(">128k", math.nan, "X")]))
    assert found == {
        "length/le4k/accept_length_change/longctx_vt": 0.01,
        "length/le4k/accept_length_change_low/longctx_vt": 0.01 - 0.05,
        "length/le4k/accept_length_change_high/longctx_vt": 0.01 + 0.05,
    }


def test_a_bin_nogo_stands_only_when_the_check_across_cells_is_nogo() -> None:
    rows = [_row("<=4k", 0.0, "GO"), _row("32k-64k", -0.3, "NO-GO")]
    assert _bin_verdicts([_check("NO-GO", rows)]) == {
        "<=4k": "GO", "32k-64k": "NO-GO (accept length, longctx_vt)"}  # fmt: skip
    assert _bin_verdicts([_check("INFO", rows)]) == {"<=4k": "GO", "32k-64k": "INCONCLUSIVE"}
    check = _check("INFO", rows, ACCURACY_BY_CATEGORY)
    assert check.kind.csv_fields(check)["by_category_nogo_bins"] == ""
