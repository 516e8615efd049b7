"""The frontier's "Tiles skipped:" sentence always says where the shares come from, or what is
missing and how to supply it (``--skip-fractions``): never a bare "Tiles skipped: ".
"""

from __future__ import annotations

import pytest

from pipeline.report.speed.frontier import frontiers
from pipeline.report.speed.skip_fractions import HOW_TO_MEASURE
from pipeline.report.write.frontier_tables import tiles_line
from tests.unit.test_restart_noise import V2, cell


@pytest.mark.parametrize(
    ("kv", "fractions", "source", "said"),
    [
        ("auto", {}, "", f"Tiles skipped: not measured here; {HOW_TO_MEASURE}."),
        ("auto", {"auto": {0.5: 0.3}}, "skip.json", "Tiles skipped: measured with HF (skip.json)."),
        # a file without this KV dtype's share: which one, and how to measure it
        ("fp8_e4m3", {"auto": {0.5: 0.3}}, "skip.json",
         "Tiles skipped: measured with HF (skip.json), which has no share for KV fp8_e4m3 at "
         f"factor 0.5: {HOW_TO_MEASURE}."),
        ("auto", {"auto": {0.25: 0.3}}, "skip.json", "no share for KV auto at factor 0.5:"),
    ],
)  # fmt: skip
def test_the_tiles_sentence_names_its_source_or_what_is_missing(
    kv: str, fractions: dict[str, dict[float, float]], source: str, said: str
) -> None:
    cells = [
        cell("fmha_v2", [10.0] * 3, V2, 0.0, kv=kv),
        cell("fmha_v2", [8.0] * 3, V2, 0.5, kv=kv),
    ]
    (front,) = frontiers(cells, lambda _c: [], fractions, "fa3")
    line = tiles_line(front, source)
    assert said in line and "--skip-fractions" in HOW_TO_MEASURE
    assert not line.rstrip().endswith(":")
