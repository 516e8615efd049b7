"""An accept block the cell builds from typed parts writes the JSON the cell always wrote.

``AcceptBlock.to_json`` of a block without ``data`` lays its fields out itself; every accept
block in the committed live results, read into fields and written again from them alone, comes
back key for key and value for value (``server_window`` is newer than those results: added).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pipeline.measuring.accept_windows import NOT_READ, Window, window_accept
from pipeline.results.accept_block import AcceptBlock

ROOT = Path(__file__).parents[2]
WINDOW = {"covers": "all", "requests": 3, "of": 3}


def _committed_blocks() -> list[dict[str, object]]:
    found = []
    for path in sorted((ROOT / "benchmarks" / "results").glob("**/result.json")):
        data = json.loads(path.read_text())
        evals = (data.get("evals") or {}).values()
        found += [b for b in [data.get("accept"), *(e.get("accept") for e in evals)] if b]
    return [{**b, "server_window": WINDOW} for b in found if "traffic" in b]


def test_every_committed_accept_block_is_written_again_from_its_fields_alone() -> None:
    blocks = _committed_blocks()
    assert len(blocks) > 100  # the live runs' evals and cells
    for block in blocks:
        built = dataclasses.replace(AcceptBlock.from_json(block), data={}).to_json()
        assert json.dumps(built) == json.dumps(block)


def test_a_block_without_statistics_writes_its_status_and_the_window() -> None:
    records = [{"error_kind": None, "spec": None}]
    out = window_accept(records, Window(records, None, NOT_READ), True, 0.1).to_json()
    assert list(out) == [
        "n_requests", "n_with_spec", "status", "server_avg_spec_accept_length", "metrics",
        "cross_check", "metrics_cross_check", "traffic", "server_window",
    ]  # fmt: skip
    assert out["status"] == "missing" and out["traffic"] is None
    assert out["cross_check"] == {"server": None, "per_request": None, "agrees": None}
    assert out["metrics"] == {}  # a window that read no counters (the server died first)
