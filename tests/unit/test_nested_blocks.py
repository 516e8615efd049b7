"""The small blocks typed where they are made write what the dataclasses wrote before them."""

from __future__ import annotations

import dataclasses
import json

from backends.backend_conf import SkipSoftmaxConf
from backends.compat import Finding
from pipeline.cell.launching import finding_json
from pipeline.measuring.speed.gpu_sampler import parse_samples, summarise


def test_a_finding_is_written_key_for_key_as_its_dataclass() -> None:
    finding = Finding("fa3-fp8", "reject", "FA3 does not support fp8", "use fmha_v2")
    assert json.dumps(finding_json(finding)) == json.dumps(dataclasses.asdict(finding))
    assert list(finding_json(finding)) == [f.name for f in dataclasses.fields(Finding)]


def test_the_skip_softmax_block_keeps_the_dataclass_order() -> None:
    # cell_result writes {"prefill", "decode"} by hand: the order asdict gave before.
    assert list(dataclasses.asdict(SkipSoftmaxConf(0.5, None))) == ["prefill", "decode"]


def test_gpu_samples_summarised_per_gpu_and_quantity() -> None:
    text = "0, 1980, 2619, 700.5, 61\n0, 1975, 2619, 690.0, 62\n1, garbage\n"
    found = summarise(parse_samples(text))
    assert set(found) == {"0"}
    first = next(iter(found["0"].values()))
    assert first == {"samples": 2, "min": 1975.0, "median": 1977.5, "max": 1980.0}
