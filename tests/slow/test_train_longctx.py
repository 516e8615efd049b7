"""train_longctx end to end on a CPU: a few target steps on 512-token rows, the EAGLE3 draft
on the target's hidden states, the HF eval, recipe.json with every file's sha256."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks.live_h200 import eagle3_format as fmt
from benchmarks.live_h200.chunks import sha256
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
