"""Cell folders in the on-disk format (result.json, samples, multirun.yaml) for report tests.

Summaries come from the real ``evals.metrics`` and ``accept_stats`` code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import yaml

from evals.metrics import summarize
from pipeline.measuring.accept_stats import summarize_accept
from pipeline.report.cli import main
from pipeline.results.sweep_jobs import BASIC_SWEEPER

SPEC = {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
GPU = "NVIDIA H200"


def records(correct: np.ndarray, accept: float | None = 2.5, tokens: int = 120) -> list[dict]:
    out = []
    for i, row in enumerate(correct):
        for r, ok in enumerate(row):
            verify = max(1, round((tokens + i % 7) / accept)) if accept else 0
            spec = ({"completion_tokens": tokens + i % 7, "verify_ct": verify,
                     "num_correct_drafts": verify, "num_proposed_drafts": 3 * verify,
                     "histogram": [verify]} if accept else None)  # fmt: skip
            out.append({"question_id": f"q{i:03d}", "repeat": r, "correct": bool(ok),
                        "extracted": "A" if ok else "B", "finish_reason": "stop",
                        "error_kind": None, "completion_tokens": tokens + i % 7,
                        "prompt_tokens": 50, "spec": spec})  # fmt: skip
    return out


def write_cell(folder: Path, variant: str, recs: list[dict] | None, *, kv: str = "auto",
               status: str = "ok", simulated: bool = False, speculative: bool = True,
               overrides: list[str] | None = None, error: dict | None = None) -> None:  # fmt: skip
    folder.mkdir(parents=True)
    (folder / ".hydra").mkdir()
    ov = overrides if overrides is not None else [f"backend={variant}", f"kv_dtype={kv}"]
    (folder / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(ov))
    evals = {}
    if recs is not None:
        (folder / "samples").mkdir()
        (folder / "samples" / "gpqa_diamond.jsonl").write_text(
            "\n".join(json.dumps(r) for r in recs) + "\n"
        )
        accept = summarize_accept(recs, speculative).to_json()
        evals["gpqa_diamond"] = {**summarize(recs), "accept": accept}
    gpu = f"{GPU} (simulated)" if simulated else GPU
    cell = {
        "name": f"m/{variant}/{kv}",
        "model": "m",
        "model_path": "org/m",
        "variant": variant,
        "kv_dtype": kv,
        "skip_softmax": {"prefill": None, "decode": None},
        "speculative": SPEC if speculative else {"algorithm": None},
        "gpu": {"name": gpu},
    }
    result = {
        "schema_version": 1,
        "status": status,
        "simulated": simulated,
        "cell": cell,
        "evals": evals,
        "error": error,
        "timing": {"finished_at": "2026-11-29T10:00:00"},
    }
    (folder / "result.json").write_text(json.dumps(result))


def write_multirun(root: Path, variants: list[str], kvs: tuple[str, ...] = ("auto",)) -> None:
    hydra = {"sweeper": {"_target_": BASIC_SWEEPER,
                         "params": {"backend": ",".join(variants), "kv_dtype": ",".join(kvs)}},
             "overrides": {"task": []}, "runtime": {"choices": {"backend": "fa3"}}}  # fmt: skip
    config = {"model": {"name": "m", "path": "org/m", "speculative": SPEC},
              "backend": {"name": "fa3"}, "kv_dtype": {"name": "auto"},
              "skip_softmax": {"prefill": None, "decode": None}}  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    (root / "multirun.yaml").write_text(yaml.safe_dump({"hydra": hydra, **config}))


def run_report(dirs: list[Path], out: Path, *extra: str) -> tuple[int, dict]:
    code = main([*map(str, dirs), "--out", str(out), *extra])
    return code, json.loads((out / "summary.json").read_text())
