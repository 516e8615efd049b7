"""train_longctx end to end on a CPU: a few target steps on short rows (long-context questions
in them), the EAGLE3 draft
on the target's hidden states, the HF eval, recipe.json with every file's sha256."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks.live_h200 import eagle3_format as fmt
from benchmarks.live_h200.chunks import sha256
from benchmarks.live_h200.reply_copy import KINDS
from benchmarks.live_h200.train_longctx import main

pytestmark = pytest.mark.slow


def test_tiny_run_writes_target_draft_metrics_and_recipe(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [str(out), "--preset", "cpu", "--steps", "4", "--tokens", "1024", "--workers", "0",
            "--log-every", "2", "--draft-steps", "3", "--draft-len", "512", "--eval-samples", "1",
            "--eval-lengths", "1024"]  # fmt: skip
    assert main(argv) == 0
    recipe = json.loads((out / "recipe.json").read_text())
    assert recipe["command"].endswith(" ".join(argv))
    assert recipe["data"]["longctx_seed"] == 1000 and recipe["target"]["steps_done"] == 4
    # the rows held long-context questions: the loss trained them (the 512-token cap of the
    # CPU preset had left none, and a task without tokens logs a loss of 0)
    log = json.loads((out / "train_target.json").read_text())["log"]
    assert sum(entry["tokens_longctx"] for entry in log) > 0
    for name, digest in recipe["sha256"].items():
        assert sha256(out / name) == digest
    assert {"target/model.safetensors", "draft/model.safetensors"} <= set(recipe["sha256"])
    target = json.loads((out / "target" / "config.json").read_text())
    assert fmt.check_folder(out / "draft", target) == []
    metrics = json.loads((out / "metrics.json").read_text())
    summary = metrics["summary"]
    assert summary["per_length"]["1024"]["n"] == 6
    assert set(summary["per_task_length"]) == {"niah_single", "niah_multikey", "niah_multivalue",
                                               "niah_multiquery", "vt", "fwe"}  # fmt: skip
    assert 1.0 <= summary["accept_length"] <= 4.0
    # Every reply's quoted lines sorted (reply_copy.py), per task and length like the accuracy.
    assert set(summary["copy_per_task_length"]) == set(summary["per_task_length"])
    assert all(set(row["copy"]) == {*KINDS, "evidence"} for row in metrics["rows"])
    assert recipe["data"]["follow_ups"] == 0 and recipe["data"]["confusable"] == 0.0


def test_the_eval_stage_without_a_draft_says_which_stage_to_run(tmp_path: Path, capsys) -> None:
    # refused before the target stage trains anything
    run = tmp_path / "run"
    assert main([str(run), "--preset", "cpu", "--stages", "target,eval"]) == 2
    assert "run the draft stage first" in capsys.readouterr().err
    assert not (run / "target").exists()
