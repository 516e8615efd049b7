"""The speed table of benchmarks/live_h200/speed_prefill.sh: blocks, baselines, medians, ratios."""

from __future__ import annotations

import pytest

from benchmarks.live_h200 import speed_table


def records(block: str, tokens: int, seconds: list[float], batch: int = 1) -> list[dict]:
    return [{"run_name": block, "batch_size": batch, "input_len": tokens, "output_len": 1,
             "prefill_latency": s} for s in seconds]  # fmt: skip


@pytest.mark.parametrize(
    ("block", "present", "want"),
    [
        ("trtllm_mha-auto", {"fa3-auto", "trtllm_mha-auto"}, "fa3-auto"),
        ("trtllm_mha-fp8_e4m3-b8", {"fa3-fp8_e4m3-b8", "fa3-auto-b8"}, "fa3-fp8_e4m3-b8"),
        ("fa3-auto", {"fa3-auto"}, None),  # the baseline itself
        ("fa3-auto-again", {"fa3-auto", "fa3-auto-again"}, "fa3-auto"),  # the A/A block
        ("trtllm_mha-auto-mem0.5", {"fa3-auto"}, None),  # no fa3 block at that memory
        ("trtllm_mha-fp8_e4m3", {"fa3-auto"}, None),  # never across KV dtypes
    ],
)
def test_baseline_of(block: str, present: set[str], want: str | None) -> None:
    assert speed_table.baseline_of(block, present | {block}, "fa3") == want


def test_rows_give_medians_ratios_and_an_interval_that_holds_the_ratio() -> None:
    recs = (records("fa3-auto", 1024, [0.024, 0.023, 0.025, 0.024, 0.026])
            + records("trtllm_mha-auto", 1024, [0.053, 0.052, 0.054, 0.053, 0.055])
            + records("fa3-auto-again", 1024, [0.024, 0.025, 0.024, 0.023, 0.024]))  # fmt: skip
    rows = {r.block: r for r in speed_table.speed_rows(recs)}
    v2 = rows["trtllm_mha-auto"]
    assert (v2.median_ms, v2.spread_ms, v2.repeats) == (53.0, (52.0, 55.0), 5)
    assert v2.ratio == pytest.approx(24.0 / 53.0)
    assert v2.ratio_ci is not None and v2.ratio_ci[0] <= v2.ratio <= v2.ratio_ci[1] < 0.5
    aa = rows["fa3-auto-again"]
    assert aa.baseline == "fa3-auto" and aa.ratio == pytest.approx(1.0)
    assert aa.ratio_ci is not None and aa.ratio_ci[0] < 1.0 < aa.ratio_ci[1]
    assert rows["fa3-auto"].ratio is None
    table = speed_table.markdown(list(rows.values()))
    assert "| trtllm_mha-auto | 1 x 1,024 | 5 | 53.0 | 52.0-55.0 | fa3-auto | 0.453 [" in table


def test_a_single_repeat_has_a_ratio_but_no_interval() -> None:
    recs = records("fa3-auto", 131072, [10.2]) + records("trtllm_mha-auto", 131072, [11.3])
    row = next(r for r in speed_table.speed_rows(recs) if r.block == "trtllm_mha-auto")
    assert row.ratio == pytest.approx(10.2 / 11.3) and row.ratio_ci is None
