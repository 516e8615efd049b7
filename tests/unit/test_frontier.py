"""The skip-softmax frontier (pure): grouping, verdicts per factor, gains, skipped shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import ACCURACY_VS_BASELINE, BROKEN_PROMPTS, STATUS
from pipeline.report.judge.verdicts import Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import load_tolerance
from pipeline.report.speed.frontier import accuracy_verdicts, factor_of, frontiers
from pipeline.report.speed.skip_fractions import (
    FrontierInputs,
    read_skip_fractions,
    skipped_fraction,
)
from pipeline.report.write.frontier_tables import frontier_entries, frontier_sections, takeaway
from pipeline.report.write.summary_json import read_summary
from pipeline.results.skip_factor import parse_factor
from tests.helpers.records import record, speed_block

REPO = Path(__file__).resolve().parents[2]
MEASURED = REPO / "benchmarks/results/live-h200/signoff/checks/skip_fraction.json"


def prefill(times: list[float], tokens: int = 16384, batch: int = 1) -> dict[str, Any]:
    return {"phase": "prefill", "batch": batch, "prompt_tokens": tokens, "new_tokens": 1,
            "times_ms": times}  # fmt: skip


def cell(
    factor: float | None,
    points: list[dict] | None = None,
    variant: str = "fmha_v2",
    kv: str = "auto",
    release: str | None = "0.5.23",
    status: str = "ok",
) -> CellRecord:
    data: dict[str, Any] = {"status": status, "cell": {"sglang_version": release}}
    if points is not None:
        data["speed"] = speed_block(points)
    return record(f"{variant}/{kv}/{release}/{factor}", data, variant=variant, kv=kv,
                  factor=factor, status=status, simulated=True)  # fmt: skip


def judged(c: CellRecord, *verdicts: tuple[str, str]) -> list[Check]:
    """Accuracy checks of ``c``: (eval, verdict) each, and the status check beside them."""
    checks = [Check(c.id, c.label, None, STATUS, "OK")]
    return checks + [Check(c.id, c.label, e, ACCURACY_VS_BASELINE, v) for e, v in verdicts]


def report(cells: list[CellRecord], checks: list[Check], **inputs: Any) -> Report:
    tol = load_tolerance("default")
    return Report(cells, checks, tol, ["x"], frontier_inputs=FrontierInputs(**inputs))


@pytest.mark.parametrize(
    ("value", "factor"), [(None, 0.0), (0, 0.0), (0.0, 0.0), (1e4, 1e4), (30000, 3e4), ("1e4", 1e4)]
)
def test_the_factor_of_a_cell_is_zero_at_exact_softmax(value: Any, factor: float) -> None:
    # A record holds the factor as ``parse_factor`` read it (a bool never gets that far).
    assert factor_of(cell(parse_factor(value, "cell.skip_softmax.prefill"))) == factor


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ([("a", ACCURACY_VS_BASELINE, "GO"), ("b", ACCURACY_VS_BASELINE, "GO")],
         {"a": "GO", "b": "GO"}),
        ([("a", ACCURACY_VS_BASELINE, "GO"), ("a", BROKEN_PROMPTS, "FAIL")], {"a": "FAIL"}),
        ([("a", ACCURACY_VS_BASELINE, "GO"), ("a", BROKEN_PROMPTS, "PASS")], {"a": "GO"}),
        ([("a", ACCURACY_VS_BASELINE, "INCONCLUSIVE"), ("b", ACCURACY_VS_BASELINE, "NO-GO")],
         {"a": "INCONCLUSIVE", "b": "NO-GO"}),
        ([(None, STATUS, "OK")], {}),
    ],
)  # fmt: skip
def test_each_evals_verdict_is_the_worst_of_its_accuracy_checks(
    found: list[tuple[Any, Any, str]], expected: dict[str, str]
) -> None:
    checks = [Check("c", "c", e, kind, verdict) for e, kind, verdict in found]
    assert accuracy_verdicts(checks) == expected


def test_one_frontier_per_variant_with_two_factors_the_baseline_and_lone_factors_left_out() -> None:
    cells = [cell(None, variant="fa3"), cell(0.0), cell(1e5), cell(1e4),
             cell(0.0, kv="fp8_e4m3"),  # one factor only: no frontier
             cell(0.0, release="0.5.19"), cell(3e4, release="0.5.19")]  # fmt: skip
    found = frontiers(cells, lambda c: [], {}, "fa3")
    assert [(f.key[3], f.key[4], [p.factor for p in f.points]) for f in found] == [
        ("auto", "0.5.19", [0.0, 3e4]), ("auto", "0.5.23", [0.0, 1e4, 1e5]),
    ]  # fmt: skip
    assert all(f.reference is not None and factor_of(f.reference) == 0.0 for f in found)


def test_the_gain_is_the_factor_0_median_over_this_one_with_its_interval() -> None:
    exact = cell(0.0, [prefill([40.0, 40.4, 39.6, 40.2, 39.8]), prefill([10.0] * 5, 1024)])
    fast = cell(3e4, [prefill([20.0, 20.2, 19.8, 20.1, 19.9]), prefill([10.0] * 5, 1024)])
    unmeasured = cell(1e5)
    (f,) = frontiers([exact, fast, unmeasured], lambda c: [], {}, "fa3")
    assert f.shapes == ((1, 1024), (1, 16384))
    ref, mine, none = f.points
    assert [g.note for g in ref.gains] == ["the factor-0 reference"] * 2
    assert ref.gains[1].median_ms == 40.0 and ref.gains[1].ratio == 1.0
    short, long = mine.gains
    assert short.ratio == pytest.approx(1.0) and long.ratio == pytest.approx(2.0)
    assert long.ratio_ci is not None and long.ratio_ci[0] <= 2.0 <= long.ratio_ci[1] < 2.1
    assert [(g.ratio, g.note) for g in none.gains] == [(None, "not measured")] * 2


def test_a_shape_the_factor_0_cell_did_not_measure_has_no_gain() -> None:
    (f,) = frontiers([cell(0.0, []), cell(1e4, [prefill([5.0] * 3)])], lambda c: [], {}, "fa3")
    (g,) = f.points[1].gains
    assert g.ratio is None and g.note == "the factor-0 cell did not measure it"


VERDICTS = [
    (("GO", "GO", "NO-GO"), 1e4, "Largest factor whose verdict is GO: 10000 ("),
    (("GO", "INCONCLUSIVE", "GO"), 1e5, "Largest factor whose verdict is GO: 100000 ("),
    (("GO", "NO-GO", "NO-GO"), 0.0, "Only exact softmax (factor 0) is GO"),
    (("NO-GO", "NO-GO", "NO-GO"), None, "No factor is GO against the baseline"),
]


@pytest.mark.parametrize(("verdicts", "best", "said"), VERDICTS)
def test_the_largest_go_factor_is_what_the_user_picks(
    verdicts: tuple[str, ...], best: float | None, said: str
) -> None:
    cells = [cell(f, [prefill([10.0, 10.1, 9.9])]) for f in (0.0, 1e4, 1e5)]
    checks = {c.id: judged(c, ("a", v)) for c, v in zip(cells, verdicts, strict=True)}
    (f,) = frontiers(cells, lambda c: checks[c.id], {}, "fa3")
    assert (f.best.factor if f.best else None) == best
    assert takeaway(f).startswith(said)


def test_a_cell_without_accuracy_checks_shows_its_own_verdict() -> None:
    failed = cell(1e4, status="failed")
    checks = {failed.id: [Check(failed.id, failed.label, None, STATUS, "FAILED")]}
    (f,) = frontiers([cell(0.0), failed], lambda c: checks.get(c.id, []), {}, "fa3")
    assert [p.verdict for p in f.points] == ["OK", "FAILED"]


@pytest.mark.parametrize(
    ("kv", "factor", "share"),
    [("auto", 1e4, 0.34995), ("bf16", 3e4, 0.65338), ("fp8_e4m3", 1e5, 0.75869),
     ("auto", 0.0, 0.0), ("auto", 2e4, None), ("fp8_e5m2", 1e4, None)],
)  # fmt: skip
def test_the_measured_share_of_skipped_tiles_per_kv_dtype_and_factor(
    kv: str, factor: float, share: float | None
) -> None:
    assert skipped_fraction(read_skip_fractions(MEASURED), kv, factor) == share


@pytest.mark.parametrize(
    ("text", "said"),
    [("{", "cannot read it as JSON"), ('{"factors": []}', "no skip_fraction"),
     ('{"skip_fraction": {"auto": {"1e4": "lots"}}}', "skip_fraction.auto.1e4='lots'"),
     ('{"skip_fraction": {"auto": {"1e4": 1.5}}}', "a share in [0, 1]")],
)  # fmt: skip
def test_a_bad_skip_fraction_file_names_the_key_and_how_to_write_it(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "skip.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"benchmarks\.live_h200\.skip_fraction") as err:
        read_skip_fractions(path)
    assert said in str(err.value) and str(path) in str(err.value)


def _frontier_report(**inputs: Any) -> Report:
    cells = [cell(None, [prefill([40.0] * 3)], variant="fa3"),
             cell(0.0, [prefill([40.0, 40.2, 39.8])]), cell(1e4, [prefill([30.0, 30.1, 29.9])]),
             cell(1e6)]  # fmt: skip
    verdicts = {0.0: ("GO", "GO"), 1e4: ("GO", "INCONCLUSIVE"), 1e6: ("NO-GO", "GO")}
    pairs = {f: list(zip(("a", "b"), v, strict=True)) for f, v in verdicts.items()}
    checks = [k for c in cells[1:] for k in judged(c, *pairs[factor_of(c)])]
    return report(cells, checks, **inputs)


def test_the_summary_entry_has_every_factor_its_verdicts_gains_and_shares() -> None:
    (entry,) = frontier_entries(_frontier_report(fractions={"auto": {1e4: 0.35}}, source="f"))
    assert (entry["variant"], entry["sglang_version"], entry["largest_go_factor"]) == (
        "fmha_v2", "0.5.23", 0.0)  # fmt: skip
    assert [p["accuracy_verdict"] for p in entry["points"]] == ["GO", "INCONCLUSIVE", "NO-GO"]
    assert entry["points"][1]["eval_verdicts"] == {"a": "GO", "b": "INCONCLUSIVE"}
    assert [p["skipped_fraction"] for p in entry["points"]] == [0.0, 0.35, None]
    (gain,) = entry["points"][1]["prefill_gain"]
    assert gain["ratio"] == pytest.approx(40 / 30) and gain["tokens"] == 16384
    assert entry["points"][2]["prefill_gain"][0]["note"] == "not measured"
    assert entry["skipped_fraction_source"] == "f" and json.dumps(entry)  # strict JSON


@pytest.mark.parametrize("per_eval", [False, True])
def test_the_table_has_a_row_per_factor_and_eval_columns_on_request(per_eval: bool) -> None:
    (section,) = frontier_sections(_frontier_report(per_eval=per_eval))
    assert section.title == "Skip-softmax frontier: fmha_v2 on m, H200, KV auto, SGLang 0.5.23"
    evals = ["a", "b"] if per_eval else []
    assert section.headers == ["factor", "tiles skipped", "accuracy verdict", *evals,
                               "prefill 1 x 16,384 gain", "cell"]  # fmt: skip
    assert [row[:3] for row in section.rows] == [
        ["0 (exact)", "0.0%", "GO"], ["10000", "not measured", "INCONCLUSIVE"],
        ["1e+06", "not measured", "NO-GO"],
    ]  # fmt: skip
    assert section.rows[0][-2] == "reference 40.0 ms" and section.rows[2][-2] == "not measured"
    assert section.rows[1][-2].startswith("1.333 [")
    assert "Only exact softmax (factor 0) is GO" in section.intro
    assert "benchmarks.live_h200.skip_fraction" in section.intro  # how to measure the shares


def test_no_frontier_without_two_factors_of_one_variant(tmp_path: Path) -> None:
    plain = report([cell(None, variant="fa3"), cell(0.0)], [])
    assert frontier_sections(plain) == [] and frontier_entries(plain) == []
    old = tmp_path / "summary.json"
    old.write_text(json.dumps({"schema_version": 3, "speed": []}))
    assert read_summary(old)["frontier"] == []  # before version 4: no frontier list


def test_a_cell_of_unrecorded_release_joins_the_one_frontier_its_other_keys_match() -> None:
    gone = cell(1e4, release=None, status="missing")
    cells = [cell(None, variant="fa3"), cell(0.0), gone, cell(0.0, kv="fp8_e4m3")]
    (found,) = frontiers(cells, lambda c: [Check(c.id, c.label, None, STATUS, c.status)], {}, "fa3")
    assert found.key[4] == "0.5.23" and [p.factor for p in found.points] == [0.0, 1e4]
    assert found.points[1].cell is gone and found.points[1].verdict == "missing"
    assert found.points[1].gains == () and found.reference is not gone
    (note,) = found.notes
    assert note.startswith(gone.label) and "MISSING, the job left no result.json" in note
    (section,) = frontier_sections(report(cells, []))
    assert note in section.intro and section.rows[1][-1] == gone.label


def test_a_cell_that_matches_two_releases_is_left_out_and_each_frontier_says_so() -> None:
    unknown = cell(3e4, release=None)
    cells = [cell(0.0), cell(1e4), cell(0.0, release="0.5.19"), cell(1e4, release="0.5.19"),
             unknown]  # fmt: skip
    found = frontiers(cells, lambda c: [], {}, "fa3")
    assert [f.key[4] for f in found] == ["0.5.19", "0.5.23"]
    for frontier in found:
        assert unknown not in [p.cell for p in frontier.points]
        (note,) = frontier.notes
        assert f"{unknown.label} left out: SGLang release not recorded in its result.json" in note
        assert "matches the frontiers of SGLang 0.5.19 and 0.5.23" in note
