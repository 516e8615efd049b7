"""Cells that share one JIT cache folder (server.jit_cache_dir), against the simulated server.

The simulated server writes one kernel file per attention configuration into each cache folder
its environment names (pipeline/simserver/jit_cache.py), as FlashInfer, Triton and Inductor do:
a file under each folder shows that variable reached the server process, and the counts in
result.json show a second cell reusing what the first compiled.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pipeline.cell.job import run_cell
from tests.helpers.cells import compose_conf, processes_mentioning
from tests.helpers.report_cells import run_report

pytestmark = pytest.mark.integration


def cell(tmp_path: Path, name: str, cache: Path, fast_sim: list[str], *overrides: str) -> dict:
    cell_dir = tmp_path / name
    conf = compose_conf([*fast_sim, f"server.jit_cache_dir={cache}", *overrides])
    assert run_cell(conf, cell_dir).status == "ok"
    assert processes_mentioning(str(cell_dir)) == []
    return json.loads((cell_dir / "result.json").read_text())


def test_two_cells_share_one_folder_and_the_second_starts_warm(tmp_path, fast_sim):
    cache = tmp_path / "jit"
    first = cell(tmp_path, "fa3", cache, fast_sim, "backend=fa3")
    assert first["server"]["jit_cache"] == {
        "dir": str(cache), "warm": False, "files_before": 0, "files_after": 3, "new_files": 3,
    }  # fmt: skip
    for folder in (".cache/flashinfer", "triton", "inductor"):  # each variable reached it
        assert len(list((cache / folder).iterdir())) == 1, folder
    env = first["provenance"]["server_env"]
    assert env["SGLANG_CACHE_DIR"] == str(cache) and env["TRITON_CACHE_DIR"] == f"{cache}/triton"

    again = cell(tmp_path, "fa3-again", cache, fast_sim, "backend=fa3")
    assert again["server"]["jit_cache"]["warm"] is True
    assert again["server"]["jit_cache"]["new_files"] == 0  # the same kernels: nothing compiled
    other = cell(tmp_path, "fmha_v2", cache, fast_sim, "backend=fmha_v2")
    assert other["server"]["jit_cache"]["files_before"] == 3
    assert other["server"]["jit_cache"]["new_files"] == 3  # another configuration compiles
    assert other["server"]["jit_cache"]["warm"] is False  # so it did not start warm
    # Where kernels are cached changes no answer: the same draws as without a cache folder.
    plain_dir = tmp_path / "plain"
    assert run_cell(compose_conf([*fast_sim, "backend=fa3"]), plain_dir).status == "ok"
    plain = json.loads((plain_dir / "result.json").read_text())
    assert "jit_cache" not in plain["server"]  # off by default on the simulated server
    assert plain["evals"]["mcq_sample"]["accuracy"] == first["evals"]["mcq_sample"]["accuracy"]
    # The report's prefill table says which cells compiled while their requests ran.
    run_report([tmp_path / "fa3", tmp_path / "fa3-again", plain_dir], tmp_path / "report")
    table = (tmp_path / "report" / "report.md").read_text().split("## Prefill time", 1)[1]
    rows = [r for r in table.split("\n## ", 1)[0].splitlines() if "| mcq_sample |" in r]
    assert [r.rstrip(" |").rsplit(" | ", 1)[1] for r in rows] == [
        "3 new cache files during the cell", "none", "-",
    ]  # fmt: skip


def test_sglang_plans_the_users_cache_folder_by_default(tmp_path, fast_sim, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SGLANG_CACHE_DIR", raising=False)
    conf = compose_conf(["server=sglang", "server.sglang_version=0.5.23", "gpu=h200",
                         "dry_run=true"])  # fmt: skip
    assert run_cell(conf, tmp_path / "dry").status == "planned"
    result = json.loads((tmp_path / "dry" / "result.json").read_text())
    root = os.path.join(str(tmp_path), ".cache", "sglang")
    assert result["server"]["jit_cache"]["dir"] == root
    assert result["server"]["jit_cache"]["files_after"] is None  # nothing started
    assert result["provenance"]["server_env"]["FLASHINFER_WORKSPACE_BASE"] == root


def test_a_later_cell_of_one_process_counts_only_its_own_start_up(tmp_path, fast_sim):
    # A sequential multirun runs its cells in one process: the second cell's start-up overhead
    # once counted every cell before it (433 s and 605 s on the H200's shape cells, 2026-12-01).
    cache = tmp_path / "jit"
    cell(tmp_path, "fa3", cache, fast_sim, "backend=fa3")
    between = time.time()
    second = cell(tmp_path, "fa3_repeat", cache, fast_sim, "backend=fa3_repeat")
    since_first = time.time() - between
    age = -second["timing"]["marks_s"]["process_start"]
    assert 0 <= age < since_first, (age, since_first)
