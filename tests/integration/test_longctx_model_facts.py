"""The retrained long-context model's committed figures (longctx-model-followups-0.5.23), as its
README quotes them, read from the files the lease brought back; the copy reading re-made on the CPU
from the replies in metrics.json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.live_h200.longctx_eval import summarize
from benchmarks.live_h200.reply_copy import reread
from tests.helpers.cells import REPO

pytestmark = pytest.mark.integration
RUN = REPO / "benchmarks/results/live-h200/longctx-model-followups-0.5.23"


def read(name: str) -> Any:
    return json.loads((RUN / name).read_text())


def test_the_recipe_is_the_lease_s_command_and_its_mix() -> None:
    recipe = read("recipe.json")
    assert recipe["command"].endswith(
        "--seed 0 --multi-needle-weight 3 --confusable 0.5 --follow-ups 3 --stages target,draft"
    )
    assert recipe["data"] | {"lengths": None} == {
        "generator": "benchmarks/live_h200/longctx_stream.py", "eval_seed": 0,
        "longctx_seed": 1000, "lengths": None, "multi_needle_weight": 3.0, "confusable": 0.5,
        "follow_ups": 3}  # fmt: skip
    assert recipe["target"]["steps_done"] == 2800 and recipe["target"]["seconds"] == 439.8


def test_hf_accuracy_per_length_and_multi_key_as_the_readme_says() -> None:
    summary = read("metrics.json")["summary"]
    per_length = {n: v["accuracy"] for n, v in summary["per_length"].items()}
    assert per_length == {"4096": 0.3889, "8192": 0.3889, "16384": 0.3333, "32768": 0.3611,
                          "65536": 0.2222, "131072": 0.1389}  # fmt: skip
    tasks = summary["per_task_length"]
    assert [tasks["niah_multikey"][n] for n in ("4096", "8192", "32768")] == [0.8333] * 3
    assert [tasks["niah_single"][n] for n in ("4096", "32768", "131072")] == [1.0, 1.0, 0.3333]
    assert all(v == 0.0 for t in ("niah_multivalue", "vt", "fwe") for v in tasks[t].values())


def test_the_copy_reading_is_remade_from_the_replies() -> None:
    rows = read("metrics.json")["rows"]
    again = summarize(reread(rows))["copy_per_task_length"]
    assert again == read("copy-reread.json")["copy_per_task_length"]
    assert again["niah_multikey"]["4096"]["evidence_copied"] == 0.8333
    assert again["niah_multivalue"]["4096"]["repeated"] == 0.625


def test_the_pipeline_cell_ran_on_the_h100_with_the_trained_draft() -> None:
    cell = read("cell-h100/result.json")
    assert cell["status"] == "ok" and cell["cell"]["gpu"]["name"] == "NVIDIA H100 80GB HBM3"
    assert "--speculative-algorithm" in cell["server"]["argv"]
    assert round(cell["accept"]["accept_length"], 2) == 2.31
    accuracy = {k: round(v["accuracy"], 3) for k, v in cell["evals"].items()}
    assert accuracy["longctx_niah_multikey"] == 0.778 and accuracy["longctx_niah_single"] == 0.667
