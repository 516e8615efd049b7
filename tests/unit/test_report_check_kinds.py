"""Each check kind owns its title, description and cells.csv columns."""

from __future__ import annotations

import math

import pytest

from pipeline.report.judge.check_kinds import (
    ACCEPT_VS_BASELINE,
    ACCURACY_VS_BASELINE,
    ACCURACY_VS_REFERENCE,
    BIN_KINDS,
    BROKEN_PROMPTS,
    KINDS,
    MCNEMAR,
    STAT_KINDS,
    STATUS,
    UNDEFINED,
)
from pipeline.report.judge.check_numbers import Adjusted
from pipeline.report.judge.verdicts import Check
from tests.helpers.check_numbers import accept_numbers, accuracy_numbers, speed_numbers


def test_every_kind_has_one_name_and_distinct_columns() -> None:
    by_bin = {"accuracy_by_length", "accept_by_length", "accuracy_by_category",
              "accept_by_category"}  # fmt: skip
    assert set(KINDS) == {"status", "accept_metric", "accuracy_vs_baseline", "accept_vs_baseline",
                          "accuracy_vs_reference", "accept_vs_reference", "mcnemar",
                          "broken_prompts", "speed_vs_baseline", "parity_vs_baseline",
                          "decode_parity_vs_baseline", "lossless_vs_spec_off", *by_bin}  # fmt: skip
    columns = [c for kind in STAT_KINDS for c in kind.columns]
    assert len(columns) == len(set(columns)) == 2 * 9 + 2 * 7
    bin_columns = [c for kind in BIN_KINDS for c in kind.columns]
    assert len(bin_columns) == len(set(bin_columns) - set(columns)) == 4 * 4


@pytest.mark.parametrize(
    ("kind", "title"),
    [(STATUS, "cell status"), (ACCURACY_VS_BASELINE, "accuracy vs fa3"),
     (MCNEMAR, "McNemar (1 repeat) vs fa3"), (ACCURACY_VS_REFERENCE, "accuracy vs reference")],
)  # fmt: skip
def test_titles(kind, title) -> None:
    assert kind.title("fa3") == title
    assert Check("c", "label", "gsm8k", kind, "GO").title("fa3") == f"gsm8k: {title}"


ACCURACY = accuracy_numbers(drop=0.06, lower=0.04, upper=0.08, nogo_bound=0.035, go_bound=0.085,
                            margin=0.02, repeats=8,
                            rates={"base_error": 0.0, "cand_error": 0.01})  # fmt: skip


def test_an_accuracy_comparison_gives_the_change_and_the_verdicts_bounds() -> None:
    check = Check("c", "l", "e", ACCURACY_VS_BASELINE, "NO-GO", numbers=ACCURACY,
                  adjusted=Adjusted(0.9, 0.001, 1))  # fmt: skip
    fields = ACCURACY_VS_BASELINE.csv_fields(check)
    assert fields == pytest.approx({
        "vs_baseline_change": -0.06, "vs_baseline_lower": -0.085, "vs_baseline_upper": -0.035,
        "vs_baseline_margin": 0.02, "vs_baseline_p_go": 0.9, "vs_baseline_p_nogo": 0.001,
        "vs_baseline_repeats": 8, "vs_baseline_baseline_error_rate": 0.0,
        "vs_baseline_candidate_error_rate": 0.01})  # fmt: skip


def test_an_accept_comparison_gives_relative_changes() -> None:
    drop = math.log(2.5 / 2.0)  # accept length 2.5 -> 2.0: 20% shorter
    numbers = accept_numbers(drop=drop, lower=drop - 0.1, upper=drop + 0.1, band=0.1)
    fields = ACCEPT_VS_BASELINE.csv_fields(Check("c", "l", "e", ACCEPT_VS_BASELINE, "NO-GO",
                                                 numbers=numbers))  # fmt: skip
    assert fields["accept_vs_baseline_change"] == pytest.approx(-0.2)
    assert fields["accept_vs_baseline_lower"] < -0.2 < fields["accept_vs_baseline_upper"]
    assert fields["accept_vs_baseline_margin"] == 0.1


def test_a_check_without_numbers_has_no_fields_and_shows_its_message() -> None:
    check = Check("c", "l", "e", ACCURACY_VS_BASELINE, "NO BASELINE", "no fa3 cell")
    assert ACCURACY_VS_BASELINE.csv_fields(check) == {}
    assert ACCURACY_VS_BASELINE.describe(check) == "no fa3 cell"
    assert STATUS.csv_fields(check) == {}


def test_why_a_number_is_missing() -> None:
    assert "no GO test" in BROKEN_PROMPTS.null_reason("p_go_adjusted")
    assert ACCURACY_VS_BASELINE.null_reason("accuracy_baseline") == UNDEFINED


def test_a_speed_check_reads_its_slowdown_against_the_band() -> None:
    numbers = speed_numbers(slowdown=2.02, slowdown_low=1.9, slowdown_high=2.1, ratio=0.495,
                            max_slowdown=1.05, aa_band=None, same_kernels=False)  # fmt: skip
    check = Check("c", "l", "prefill 1x1024", KINDS["speed_vs_baseline"], "NO-GO", numbers=numbers)
    text = check.kind.describe(check)
    assert "time 2.020x the baseline's" in text and "[1.900, 2.100]" in text
    assert "no A/A at this shape" in text and "vs band 1.05x" in text
    assert check.title("fa3") == "prefill 1x1024: speed vs fa3"
    assert check.kind.null_reason("aa_band") == "no A/A measured this shape"
