"""Restart noise: the A/A band per shape, and which ratios lie beyond it."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.frontier import frontiers
from pipeline.report.speed.restart_noise import FASTER, NO_AA, SLOWER, WITHIN, beyond, restart_noise
from tests.helpers.records import record, speed_block
from tests.unit.test_frontier import prefill

FA3 = {"prefill": "fa3", "decode": "fa3", "verify": "fa3", "draft": "fa3"}
V2 = {"prefill": "fmha_v2", "decode": "xqa", "verify": "xqa", "draft": "xqa"}
K16 = ("prefill", 1, 16384)  # SpeedPoint.key of prefill([...])


def cell(
    variant: str,
    times: list[float],
    runs: dict[str, str] | None = None,
    factor: float | None = None,
    sweep: str = "s",
    **where: Any,
) -> CellRecord:
    data: dict[str, Any] = {
        "status": "ok", "cell": {"sglang_version": where.get("release", "0.5.23")},
        "runs": FA3 if runs is None else runs,
        "speed": speed_block([prefill(times)], repeats=3),
    }  # fmt: skip
    return record(f"{sweep}/{variant}/{factor}", data, variant=variant,
                  kv=where.get("kv", "auto"), factor=factor, gpu=where.get("gpu", "H200"),
                  sweep=sweep)  # fmt: skip


@pytest.mark.parametrize(
    ("ci", "band", "said"),
    [
        ((1.20, 1.30), 1.10, FASTER),  # wholly above the band
        ((0.80, 0.88), 1.10, SLOWER),  # wholly below its inverse (0.909)
        ((1.05, 1.30), 1.10, WITHIN),  # reaches into the band
        ((0.85, 0.95), 1.10, WITHIN),
        ((1.01, 1.02), 1.00, FASTER),  # a band of 1: the bootstrap interval decides alone
        ((1.20, 1.30), None, None),  # no A/A measured this shape
        (None, 1.10, None),  # no interval
    ],
)
def test_a_ratio_is_faster_or_slower_only_beyond_the_a_a_band(ci, band, said) -> None:
    assert beyond(ci, band) == said


def test_the_band_is_the_largest_ratio_of_the_a_a_pairs_at_each_shape() -> None:
    cells = [
        cell("fa3", [10.0] * 3), cell("fa3_repeat", [11.0] * 3),  # same kernels: an A/A, 1.10
        cell("fmha_v2", [8.0] * 3, V2, 0.0), cell("fmha_v2", [10.0] * 3, V2, 0.0, sweep="t"),
        cell("fmha_v2", [6.0] * 3, V2, 1e4),  # another factor: no A/A of its own
    ]  # fmt: skip
    noise = restart_noise(cells)
    assert noise.band(cells[0], K16) == pytest.approx(1.25)  # 10 / 8, the wider of the two
    assert noise.band(cells[0], ("prefill", 1, 1024)) is None  # no A/A at that shape
    assert len(noise.pairs[("H200", "m", "0.5.23")]) == 2


@pytest.mark.parametrize(
    ("other", "why"),
    [
        ({"runs": V2}, "other kernels"),
        ({"factor": 1e4}, "another skip-softmax factor"),
        ({"kv": "fp8_e4m3"}, "another KV dtype"),
        ({"release": "0.5.19"}, "another release"),
        ({"gpu": "B200"}, "another GPU"),
    ],
)
def test_cells_that_differ_in_the_engine_are_no_a_a(other: dict[str, Any], why: str) -> None:
    noise = restart_noise([cell("fa3", [10.0] * 3), cell("fa3_repeat", [14.0] * 3, **other)])
    assert noise.bands == {}, why


def test_without_the_kernels_recorded_only_one_variant_name_pairs() -> None:
    two_names = [cell("fa3", [10.0] * 3, {}), cell("fmha_v2", [14.0] * 3, {})]
    assert restart_noise(two_names).bands == {}
    one_name = [cell("fa3", [10.0] * 3, {}), cell("fa3", [12.0] * 3, {}, sweep="t")]
    assert restart_noise(one_name).band(one_name[0], K16) == pytest.approx(1.2)


def test_the_frontier_gains_carry_the_band_and_its_reference_is_the_sweep_of_most_factors():
    cells = [
        cell("fmha_v2", [12.0] * 3, V2, 0.0, sweep="again"),
        cell("fmha_v2", [10.0, 10.1, 9.9], V2, 0.0, sweep="main"),
        cell("fmha_v2", [8.0, 8.1, 7.9], V2, 1e4, sweep="main"),
    ]  # fmt: skip
    noise = restart_noise(cells)
    (front,) = frontiers(cells, lambda _c: [], {}, "fa3", noise.band)
    assert front.reference is cells[1]  # not the lone factor-0 start of sweep "again"
    again, _, skipping = front.points[0], front.points[1], front.points[2]
    assert again.gains[0].ratio == pytest.approx(10 / 12)
    gain = skipping.gains[0]
    assert gain.aa_band == pytest.approx(1.2) and gain.ratio == pytest.approx(1.25)
    assert beyond(gain.ratio_ci, gain.aa_band) == FASTER  # 1.23-1.27 lies above 1.2


def test_a_report_without_an_a_a_says_so_and_how_to_add_one() -> None:
    alone = [cell("fa3", [10.0] * 3), cell("fmha_v2", [8.0] * 3, V2)]
    assert restart_noise(alone).said(alone) == NO_AA and "fa3_repeat" in NO_AA
    twice = [*alone, cell("fa3_repeat", [10.5] * 3)]
    said = restart_noise(twice).said(twice)
    assert said != NO_AA and "m/fa3_repeat/auto/sp=None/sd=None @ H200" in said
