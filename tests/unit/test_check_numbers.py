"""summary.json's numbers: written in the order they always were, a number never set left out."""

from __future__ import annotations

import json
from dataclasses import replace

from pipeline.report.judge.check_numbers import (
    NO_NUMBERS,
    UNSET,
    Adjusted,
    BrokenNumbers,
    numbers_json,
)
from pipeline.report.judge.parity_numbers import ParityBand, ParityNumbers, band_of
from tests.helpers.check_numbers import accuracy_numbers, bin_numbers, bin_row


def test_an_unset_number_is_left_out_and_a_set_one_keeps_its_place() -> None:
    assert numbers_json(NO_NUMBERS) == {}
    keys = list(numbers_json(accuracy_numbers()))
    assert "nogo_family" not in keys and "earlier_runs" not in keys
    # The order summary.json has always had: the drop's, then the comparison's, then the rest.
    assert keys[:9] == ["drop", "se", "df", "margin", "alpha", "level", "ci95", "lower", "upper"]
    assert keys[keys.index("cand_truncated") + 1] == "identical_share"  # rates, then dependence
    keys = list(numbers_json(accuracy_numbers(nogo_family=3)))
    assert keys[keys.index("cand_truncated") + 1 : keys.index("identical_share")] == ["nogo_family"]


def test_what_the_correction_adds_comes_last_and_extra_repeats_only_when_sized() -> None:
    numbers = BrokenNumbers(40, ["q1"], 0.01, "fa3")
    written = numbers_json(numbers, Adjusted(float("nan"), 0.02, 4))
    assert list(written) == ["testable", "broken_questions", "p", "baseline", "p_go_adjusted",
                             "p_nogo_adjusted", "family_size"]  # fmt: skip
    sized = numbers_json(replace(numbers, nogo_family=2), Adjusted(0.5, 0.5, 1, None))
    assert list(sized)[4] == "nogo_family" and sized["extra_repeats"] is None


def test_nested_rows_are_written_as_mappings() -> None:
    written = numbers_json(bin_numbers([bin_row("<=4k", 0.01, "GO")], "length"))
    assert written["bins"][0] == {"label": "<=4k", "questions": 8, "change": 0.01,
                                  "change_low": 0.01 - 0.05, "change_high": 0.01 + 0.05,
                                  "p_go": 0.5, "p_nogo": 0.01, "verdict": "GO"}  # fmt: skip
    json.dumps(written)  # nothing left that JSON cannot write


def test_a_parity_check_without_an_a_a_has_no_band_key() -> None:
    numbers = ParityNumbers("kl", 0.01, 0.0, 0.02, 0.005, 12, 900, 0.95, 0.1, 0.001, 2.0,
                            "runs/fa3", "fa3", "by the report's rule", None, [], [])  # fmt: skip
    assert "band" not in numbers_json(numbers) and band_of(numbers) is None
    band = ParityBand(0.04, "aa", 0.02, "2 x the upper bound of fa3-aa", "fa3-aa", 0.02, None, None)
    judged = numbers_json(replace(numbers, judged=band))
    assert list(judged)[-8:] == ["band", "band_source", "band_noise", "band_why", "aa_cell",
                                 "aa_upper", "reference_cell", "reference_upper"]  # fmt: skip
    assert band_of(replace(numbers, judged=band)) == (0.04, "aa", "2 x the upper bound of fa3-aa")
    assert UNSET not in judged.values()


def test_a_number_never_set_reads_as_absent() -> None:
    # `if n.stopped_early:` on a never-set field made every undecided reference check INFO.
    from pipeline.report.judge.check_numbers import UNSET

    assert not UNSET
    assert (UNSET or "fallback") == "fallback"
