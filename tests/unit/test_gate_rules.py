"""The gate's rules: nothing judged is not GO, speed bands, --baseline-dir cells as baselines."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.report.assemble.build import under_test
from pipeline.report.assemble.gate import gate_exit_code, judged, not_judged
from pipeline.report.judge.check_kinds import KINDS
from pipeline.report.judge.verdicts import Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import SpeedTolerance, ToleranceError, load_tolerance
from pipeline.report.speed.band_checks import slowdown_verdict
from pipeline.report.speed.ratios import SpeedRow
from pipeline.results.result_types import CellIdentity, CellResult
from pipeline.results.speed_block import SpeedPoint

SHAPE_4K = ("prefill", 1, 4096)


def _check(kind: str, verdict: str) -> Check:
    return Check("id", "label", "e", KINDS[kind], verdict)


@pytest.mark.parametrize(
    ("checks", "code", "was_judged"),
    [
        ([("status", "OK")] * 3, 2, False),  # speed-only cells, no band: the report
        ([], 2, False),
        ([("status", "OK"), ("accuracy_vs_reference", "NO REFERENCE")], 2, False),
        ([("status", "OK"), ("accept_metric", "PASS"), ("mcnemar", "INFO")], 2, False),
        ([("status", "OK"), ("accuracy_vs_baseline", "GO")], 0, True),
        ([("status", "OK"), ("accuracy_vs_reference", "PASS")], 0, True),
        ([("status", "OK"), ("speed_vs_baseline", "GO")], 0, True),
        ([("status", "OK"), ("speed_vs_baseline", "NO-GO")], 1, True),
        ([("status", "OK"), ("speed_vs_baseline", "INCONCLUSIVE")], 2, False),
        ([("status", "OK"), ("broken_prompts", "FAIL")], 1, True),
        ([("accuracy_vs_baseline", "GO"), ("status", "MISSING")], 2, True),
    ],
)
def test_a_report_that_judged_nothing_exits_2(checks, code, was_judged) -> None:
    found = [_check(kind, verdict) for kind, verdict in checks]
    assert gate_exit_code(found) == code
    assert judged(found) is was_judged


@pytest.mark.parametrize(
    ("interval", "band", "verdict"),
    [
        ((0.95, 1.04), 1.05, "GO"),  # wholly within
        ((0.95, 1.05), 1.05, "GO"),  # at the band's edge: within
        ((1.06, 1.20), 1.05, "NO-GO"),  # wholly beyond
        ((1.00, 1.10), 1.05, "INCONCLUSIVE"),  # straddles it
        ((1.95, 2.10), 3.0, "GO"),
        ((0.80, 0.85), 0.9, "GO"),  # a band below 1 asks for a speed-up
        ((0.88, 0.95), 0.9, "INCONCLUSIVE"),
    ],
)
def test_a_slowdown_interval_against_its_band(interval, band, verdict) -> None:
    assert slowdown_verdict(interval, band) == verdict


@pytest.mark.parametrize(
    ("bands", "shape", "expected"),
    [
        (SpeedTolerance(), ("prefill", 1, 1024), None),
        (SpeedTolerance(max_slowdown=1.05), ("decode", 8, 512), 1.05),
        (SpeedTolerance(1.05, phases={"decode": 1.5}), ("decode", 8, 512), 1.5),
        (SpeedTolerance(1.05, phases={"decode": 1.5}), ("prefill", 8, 1024), 1.05),
        (SpeedTolerance(phases={"prefill": 1.2}, shapes={"prefill 1x4096": 1.0}), SHAPE_4K, 1.0),
        (SpeedTolerance(phases={"prefill": 1.2}), ("decode", 1, 512), None),
    ],
)
def test_the_most_specific_speed_band_applies(bands, shape, expected) -> None:
    assert bands.band(*shape) == expected
    assert bands.judged is (bands != SpeedTolerance())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("speed:\n  max_slowdown: 0\n", "speed.max_slowdown = 0"),
        ("speed:\n  phases: {verify: 1.1}\n", "speed.phases.verify: use one of prefill, decode"),
        ("speed:\n  shapes: {'prefill 1 x 4096': 1.1}\n", "write 'PHASE BATCHxTOKENS'"),
        ("speed:\n  shapes: {'decode 8x512': -1}\n", "speed band 'decode 8x512' = -1"),
        ("speed:\n  max_slowdwn: 1.1\n", "max_slowdwn"),
    ],
)
def test_a_bad_speed_band_names_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(ToleranceError, match=message.replace("(", r"\(")):
        load_tolerance(str(path))


def test_the_shipped_policy_leaves_speed_informational() -> None:
    assert load_tolerance("default").speed == SpeedTolerance()


def _cell(folder: str | None, sweep: str) -> CellRecord:
    path = Path(folder) if folder else None
    ident = CellIdentity(model="m", model_path="m", variant="fa3", kv_dtype="auto", gpu_name="g")
    record = CellRecord("id", path, "ok", ident, True)
    record.sweep = sweep
    return record


@pytest.mark.parametrize(
    ("folder", "sweep", "paths", "baseline_dirs", "judged_here"),
    [
        ("/r/A/0_fa3", "/r/A", ["/r/B"], ["/r/A"], False),  # report B --baseline-dir A
        ("/r/B/0_v2", "/r/B", ["/r/B"], ["/r/A"], True),
        ("/r/A/0_fa3", "/r/A", ["/r/A"], ["/r/A"], True),  # the DIR under test itself
        ("/r/A/0_fa3", "/r/A", ["/r/A", "/r/B"], ["/r/A"], True),
        ("/r/A/0_fa3", "/r/A", ["/r"], ["/r/A"], False),  # named apart inside a DIR
        ("/r/B/0_v2", "/r/B", ["/r"], ["/r/A"], True),
        ("/r/B/0_v2", "/r/B", ["/r/B"], ["/r"], True),  # a baseline folder above the DIR
        ("/r/A/0_fa3", "/r/A", ["/r/B"], ["/r"], False),
        (None, "/r/A", ["/r/B"], ["/r/A"], False),  # a MISSING job of the baseline sweep
        (None, "/r/B", ["/r/B"], ["/r/A"], True),
        ("/r/B/0_v2", "/r/B", ["/r/B"], [], True),
    ],
)
def test_baseline_dir_cells_outside_the_dirs_under_test_are_baselines_only(
    folder, sweep, paths, baseline_dirs, judged_here
) -> None:
    cell = _cell(folder, sweep)
    assert under_test(cell, [Path(p) for p in paths], [Path(b) for b in baseline_dirs]) is (
        judged_here
    )


SPEED_LINE = "speed of 1 candidate cell(s) (v2): "
NO_DECODE_BAND = "no speed band for decode 1x1024 in the policy"
SPEED_ONLY = "no check judged it (speed only, no eval to compare)"


def _row(cell: CellRecord, phase: str = "prefill") -> SpeedRow:
    point = SpeedPoint(phase, 1, 1024, 0 if phase == "prefill" else 32, (10.0, 11.0))
    return SpeedRow(cell, point, None, 0.5, (0.45, 0.55), "")


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ([], [f"{SPEED_LINE}no speed band in the policy", f"fa3: {SPEED_ONLY}"]),
        ([("v2", "prefill 1x1024")], [f"{SPEED_LINE}{NO_DECODE_BAND}"]),
        ([("v2", "prefill 1x1024"), ("v2", "decode 1x1024")], []),
    ],
)
def test_what_was_not_judged_is_said_once_per_cause(checks, expected) -> None:
    base, cand = _cell("/r/A/0", "/r/A"), _cell("/r/A/1", "/r/A")
    base.id, cand.id = "fa3", "v2"
    cand.identity = replace(cand.identity, variant="v2")
    base.result = cand.result = CellResult.from_json({"status": "ok", "speed": {"points": []}})
    found = [Check(cand.id, cand.label, shape, KINDS["speed_vs_baseline"], "GO")
             for _, shape in checks]  # fmt: skip
    rows = [_row(cand), _row(cand, "decode")]
    lines = [line.replace(cand.label, "v2").replace(base.label, "fa3")
             for line in not_judged([base, cand], found, rows, "fa3")]  # fmt: skip
    assert [line[: len(e)] for line, e in zip(lines, expected, strict=False)] == expected
    assert len(lines) == len(expected)
