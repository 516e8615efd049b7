"""The A/A control is never judged against the band made from itself; a ratio on the edge is within.

The band is the largest ratio two starts of one engine configuration gave, so the A/A's own ratio
is the band (or below it): judging it would judge the band against itself, and the same quotient
taken the other way round (``1 / (a / b)`` against ``b / a``) differs in its last bit, which read
``faster`` on the serving table (``fa3_repeat ... 1.028 faster``). Each speed section's rule
(``restart_noise.beyond``) and where it is applied: the serving rows, the speed rows, the frontier.
"""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.frontier import frontiers
from pipeline.report.speed.restart_noise import (
    AA,
    FASTER,
    SLOWER,
    WITHIN,
    beyond,
    restart_noise,
    same_engine,
)
from pipeline.report.speed.serving import serving_rows
from tests.helpers.records import record
from tests.unit.test_restart_noise import FA3, V2, cell

# 100 and 109 tokens/s: the band is 1 / (100 / 109) = 1.0899999999999999, the ratio 109 / 100 =
# 1.09, one bit above it.
SLOW, FAST = 100.0, 109.0
ROUNDED_BAND = max(SLOW / FAST, FAST / SLOW, 1.0 / (SLOW / FAST))


@pytest.mark.parametrize(
    ("ci", "band", "aa_pair", "said"),
    [
        ((1.10, 1.10), 1.10, False, WITHIN),  # on the band's upper edge: within it
        ((1 / 1.10, 1 / 1.10), 1.10, False, WITHIN),  # on its lower edge
        ((FAST / SLOW, FAST / SLOW), ROUNDED_BAND, False, WITHIN),  # a last-bit tie: within
        ((1.10 * (1 + 1e-6), 1.2), 1.10, False, FASTER),  # clear of the edge: called
        ((0.5, 1 / 1.10 / (1 + 1e-6)), 1.10, False, SLOWER),
        ((FAST / SLOW, FAST / SLOW), ROUNDED_BAND, True, AA),  # the pair that made the band
        ((1.50, 1.60), 1.10, True, AA),  # whatever the band from other pairs: the A/A, no verdict
        ((0.50, 0.60), None, True, AA),
        (None, 1.10, True, None),  # no ratio: nothing to show
        ((1.50, 1.60), None, False, None),  # no A/A measured the shape
    ],
)
def test_a_ratio_is_called_only_clear_of_the_band_and_never_the_a_a_itself(
    ci: tuple[float, float] | None, band: float | None, aa_pair: bool, said: str | None
) -> None:
    assert beyond(ci, band, aa_pair) == said


def _serving(cid: str, variant: str, tps: float, runs: dict[str, str] = FA3) -> CellRecord:
    point = {"bucket": 1024, "concurrency": 1, "requests": 8, "output_tokens_per_s": tps,
             "tokens_per_s_per_user": tps}  # fmt: skip
    serving = {"speculation": True, "prompts": "random", "points": [point]}
    data: dict[str, Any] = {"status": "ok", "cell": {"sglang_version": "0.5.23"}, "runs": runs,
                            "serving": serving}  # fmt: skip
    return record(cid, data, variant=variant)


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        # fa3_repeat a bit faster: its ratio is the band up to the last bit; shown as the A/A
        ([_serving("a", "fa3", SLOW), _serving("b", "fa3_repeat", FAST)],
         {"fa3": None, "fa3_repeat": AA}),
        # the same the other way round
        ([_serving("a", "fa3", FAST), _serving("b", "fa3_repeat", SLOW)],
         {"fa3": None, "fa3_repeat": AA}),
        # a candidate on other kernels beyond the A/A's band is called; the A/A is not
        ([_serving("a", "fa3", SLOW), _serving("b", "fa3_repeat", 102.0),
          _serving("c", "fmha_v2", 150.0, V2)],
         {"fa3": None, "fa3_repeat": AA, "fmha_v2": FASTER}),
        # a candidate exactly on the band's edge (FAST / SLOW against the band 1.09): within
        ([_serving("a", "fa3", SLOW), _serving("b", "fa3_repeat", FAST),
          _serving("c", "fmha_v2", FAST, V2)],
         {"fa3": None, "fa3_repeat": AA, "fmha_v2": WITHIN}),
        # no A/A: nothing is called, the other variant neither
        ([_serving("a", "fa3", SLOW), _serving("c", "fmha_v2", 150.0, V2)],
         {"fa3": None, "fmha_v2": None}),
    ],
)  # fmt: skip
def test_the_serving_a_a_row_shows_the_a_a_not_a_verdict(
    cells: list[CellRecord], said: dict[str, str | None]
) -> None:
    rows = serving_rows(cells, "fa3", ["model", "kv_dtype", "skip_softmax", "gpu"])
    assert {r.cell.variant: r.beyond_aa for r in rows} == said


@pytest.mark.parametrize(
    ("other", "pair"),
    [
        (cell("fa3_repeat", [11.0] * 3), True),  # the baseline again under another name
        (cell("fa3", [11.0] * 3, sweep="t"), True),  # run again under the same name
        (cell("fmha_v2", [11.0] * 3, V2), False),  # other kernels
        (cell("fa3_repeat", [11.0] * 3, kv="fp8_e4m3"), False),  # another KV dtype
        (cell("fa3_repeat", [11.0] * 3, factor=1e4), False),  # another skip-softmax factor
    ],
)
def test_an_a_a_pair_is_one_engine_started_twice(other: CellRecord, pair: bool) -> None:
    base = cell("fa3", [10.0] * 3)
    assert same_engine(other, base) is pair
    assert not same_engine(base, base) and not same_engine(base, None)  # one cell is no pair


def test_the_frontier_s_second_factor_0_start_is_the_a_a_and_a_factor_is_judged() -> None:
    cells = [
        cell("fmha_v2", [12.0] * 3, V2, 0.0, sweep="again"),
        cell("fmha_v2", [10.0] * 3, V2, 0.0, sweep="main"),
        cell("fmha_v2", [8.0] * 3, V2, 1e4, sweep="main"),
    ]  # fmt: skip
    noise = restart_noise(cells)
    (front,) = frontiers(cells, lambda _c: [], {}, "fa3", noise.band)
    again, reference, skipping = front.points
    assert reference.cell is front.reference and not reference.gains[0].aa_pair
    gain = again.gains[0]
    assert gain.aa_pair and gain.ratio == pytest.approx(10 / 12)
    assert beyond(gain.ratio_ci, gain.aa_band, gain.aa_pair) == AA  # 1 / 1.2: the band's edge
    gain = skipping.gains[0]
    assert not gain.aa_pair and beyond(gain.ratio_ci, gain.aa_band, gain.aa_pair) == FASTER


@pytest.mark.parametrize("band", [1.0, 1.05, 3.0])  # tight (undecided), near, loose (a GO)
def test_no_serving_band_judges_the_a_a_only_the_candidate(band: float) -> None:
    from pipeline.report.load.tolerance import ServingTolerance
    from pipeline.report.speed.serving import serving_checks

    cells = [_serving("a", "fa3", SLOW), _serving("b", "fa3_repeat", FAST),
             _serving("c", "fmha_v2", 150.0, V2)]  # fmt: skip
    rows = serving_rows(cells, "fa3", ["model", "kv_dtype", "skip_softmax", "gpu"])
    checks = serving_checks(rows, ServingTolerance(max_slowdown=band), "fa3")
    # Judged, its band widened by the A/A, the repeat was GO at 3.0 and INCONCLUSIVE at 1.0: a
    # check its own band decided. Only the candidate is judged.
    assert [c.cell_id for c in checks] == ["c"]
