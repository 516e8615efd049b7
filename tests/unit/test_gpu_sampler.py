"""nvidia-smi samples read (pure), and a machine without nvidia-smi recorded as such."""

from __future__ import annotations

from pipeline.measuring.speed.gpu_sampler import parse_samples, sampled_gpus, summarise

LINES = """0, 1980, 3201, 412.50, 61
1, 1755, 3201, [N/A], 58
0, 1965, 3201, 630.10, 64
garbage line
0, 1970, 3201, 598.00
"""


def test_samples_are_read_per_gpu_and_an_unreadable_field_is_left_out() -> None:
    found = parse_samples(LINES)
    assert found["0"]["sm_clock_mhz"] == [1980.0, 1965.0]
    assert found["0"]["power_w"] == [412.5, 630.1]
    assert found["1"]["power_w"] == []  # [N/A]: not read, never a zero
    summary = summarise(found)
    assert summary["0"]["temperature_c"] == {"samples": 2, "min": 61.0, "median": 62.5,
                                             "max": 64.0}  # fmt: skip
    assert summary["1"]["power_w"] == {"samples": 0, "min": None, "median": None, "max": None}


def test_without_nvidia_smi_the_samples_are_recorded_absent() -> None:
    with sampled_gpus(100, program="no-such-nvidia-smi-here") as found:
        pass
    assert found["source"] == "absent" and "not found on PATH" in found["reason"]
    assert "gpus" not in found
