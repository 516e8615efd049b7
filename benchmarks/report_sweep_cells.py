"""Issue 40's long-context sweep written to disk as ``mtp-eval -m`` leaves it (the report's timing).

Two sweep folders, each a Hydra ``multirun.yaml`` and its jobs' folders (``N_name/`` with
``.hydra/overrides.yaml``, ``result.json``, ``samples/<eval>.jsonl``), numbered and named by
``pipeline.report.load.expected.expected_jobs`` as the report will look for them: ``base`` (fa3
at each KV dtype) and ``cand`` (fmha_v2 at each prefill skip-softmax factor and KV dtype).
The questions are the real long-context evals' (``evals.longctx``), the lines and eval blocks the
cell runner's own functions; only the answers are drawn (``chance``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from evals.base import EvalPrompt
from evals.eval_conf import DatasetConf, EvalConf, LongCtxConf
from evals.longctx import LongCtxEval
from evals.longctx_tasks import TASKS
from evals.metrics import prompt_hash, summarize
from pipeline.measuring.accept_stats import summarize_accept
from pipeline.measuring.evaluation import with_meta
from pipeline.report.load.expected import expected_jobs
from pipeline.results.result_blocks import CellIdentity
from pipeline.results.sweep_jobs import BASIC_SWEEPER

MODEL = {"name": "synth-longctx", "path": "org/synth-longctx"}
SPEC = {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
GPU = {"name": "NVIDIA H200", "compute_capability": "9.0", "sm": 90, "family": "SM90"}
LONGEST = 131072
WORST_DROP = 0.30  # the largest factor at 128k loses this much of a question's chance
WRONG = "The final answer is nothing I could find."


@dataclass(frozen=True)
class Sweep:
    """The sweep's shape: lengths, candidate factors, KV dtypes, questions and repeats."""

    lengths: tuple[int, ...]
    factors: tuple[int, ...]
    kv_dtypes: tuple[str, ...]
    samples: int  # questions per task and length
    repeats: int

    def cells(self) -> int:
        """Candidate cells (factor x KV dtype) and one baseline per KV dtype."""
        return (len(self.factors) + 1) * len(self.kv_dtypes)

    def lines(self) -> int:
        """Sample lines in the whole sweep."""
        return self.cells() * len(TASKS) * len(self.lengths) * self.samples * self.repeats


@dataclass(frozen=True)
class Question:
    """One prompt of an eval with its right reply and its own chance of being answered right."""

    prompt: EvalPrompt
    right: str
    chance: float
    hash: str  # prompt_hash of 128k tokens costs a millisecond: once per prompt, not per cell


def questions(sweep: Sweep, rng: np.random.Generator) -> dict[str, list[Question]]:
    """Every eval's prompts at every repeat, generated once (the question cache keeps them)."""
    out = {}
    for task in TASKS:
        node = LongCtxConf(task=task, lengths=list(sweep.lengths), samples=sweep.samples,
                           tokens="bytes", server_kind="sglang")  # fmt: skip
        conf = EvalConf(kind="longctx", repeats=sweep.repeats, longctx=node,
                        dataset=DatasetConf(source="generated", path="longctx"))  # fmt: skip
        ev = LongCtxEval(f"longctx_{task}", conf)
        prompts = ev.prompts()
        right = {p.question_id: reply for p, (_, reply) in zip(prompts, ev.training_text())}  # noqa: B905
        chance = {qid: float(rng.beta(8, 2)) for qid in right}
        out[ev.name] = [Question(p, right[p.question_id], chance[p.question_id],
                                 prompt_hash(p.messages)) for p in prompts]  # fmt: skip
    return out


def chance(q: Question, factor: int, kv: str) -> float:
    """A question's chance under a cell: lower with the factor, more so the longer the prompt."""
    scale = math.log1p(factor) / math.log1p(100000) * q.prompt.meta["length"] / LONGEST
    return max(0.0, q.chance - WORST_DROP * scale - (0.01 if kv.startswith("fp8") else 0.0))


def sample_line(q: Question, ok: bool, accept: float, rng: np.random.Generator) -> dict[str, Any]:
    """One ``samples/<eval>.jsonl`` line, with the keys and meta the cell runner writes."""
    tokens = int(rng.integers(40, 120))
    verify = max(1, round(tokens / accept))
    response = q.right if ok else WRONG
    record = {
        "question_id": q.prompt.question_id, "repeat": q.prompt.repeat, "permutation": None,
        "prompt_hash": q.hash, "answer": q.prompt.answer,
        "response": response, "reasoning_content": None,
        "extracted": response.rsplit("is ", 1)[-1].rstrip("."), "correct": ok,
        "finish_reason": "stop", "prompt_tokens": q.prompt.meta["prompt_tokens"],
        "completion_tokens": tokens, "latency_s": 0.5, "prefill_s": 0.1, "attempts": 1,
        "error_kind": None, "error": None, "retried": [],
        "spec": {"completion_tokens": tokens, "verify_ct": verify,
                 "num_correct_drafts": tokens - verify, "num_proposed_drafts": 3 * verify,
                 "histogram": [verify]},
    }  # fmt: skip
    return with_meta(record, q.prompt)


def eval_lines(qs: list[Question], factor: int, kv: str, rng: np.random.Generator) -> list[dict]:
    """An eval's lines in one cell: answers drawn at each question's chance under the cell."""
    accept = 2.6 - 0.2 * math.log1p(factor) / math.log1p(100000)
    return [sample_line(q, bool(rng.random() < chance(q, factor, kv)), accept, rng) for q in qs]


def result_json(variant: str, kv: str, factor: float | None, evals: dict[str, Any]) -> dict:
    """A finished cell's ``result.json``, as the fields the report reads."""
    cell = {"name": f"{MODEL['name']}/{variant}/{kv}", "model": MODEL["name"],
            "model_path": MODEL["path"], "variant": variant, "kv_dtype": kv,
            "skip_softmax": {"prefill": factor, "decode": None}, "speculative": SPEC,
            "gpu": GPU}  # fmt: skip
    return {"schema_version": 1, "status": "ok", "simulated": False, "cell": cell,
            "evals": evals, "error": None,
            "timing": {"finished_at": "2026-12-05T10:00:00"}}  # fmt: skip


def write_cell(folder: Path, overrides: list[str], job: CellIdentity, lines: dict) -> None:
    """One job's folder: its overrides, its samples and its ``result.json``."""
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    (folder / "samples").mkdir()
    evals = {}
    for name, recs in lines.items():
        text = "\n".join(json.dumps(r) for r in recs) + "\n"
        (folder / "samples" / f"{name}.jsonl").write_text(text)
        evals[name] = {**summarize(recs), "accept": summarize_accept(recs, True).to_json()}
    result = result_json(str(job.variant), str(job.kv_dtype), job.skip_prefill, evals)
    (folder / "result.json").write_text(json.dumps(result))


def write_multirun(root: Path, params: dict[str, str], backend: str) -> None:
    """Hydra's ``multirun.yaml`` of a sweep over ``params`` (the basic sweeper's grid)."""
    hydra = {"sweeper": {"_target_": BASIC_SWEEPER, "params": params},
             "overrides": {"task": []}, "runtime": {"choices": {"backend": backend}}}  # fmt: skip
    config = {"model": {**MODEL, "speculative": SPEC}, "backend": {"name": backend},
              "kv_dtype": {"name": "auto"},
              "skip_softmax": {"prefill": None, "decode": None}}  # fmt: skip
    root.mkdir(parents=True)
    (root / "multirun.yaml").write_text(yaml.safe_dump({"hydra": hydra, **config}))


def write_sweeps(root: Path, sweep: Sweep, seed: int = 40) -> tuple[Path, Path]:
    """The baseline and candidate sweep folders under ``root``; returns both."""
    rng = np.random.default_rng(seed)
    qs = questions(sweep, rng)
    kvs = ",".join(sweep.kv_dtypes)
    factors = ",".join(map(str, sweep.factors))
    grids = {"base": ("fa3", {"backend": "fa3", "kv_dtype": kvs}),
             "cand": ("fmha_v2", {"backend": "fmha_v2", "kv_dtype": kvs,
                                  "skip_softmax.prefill": factors})}  # fmt: skip
    for name, (backend, params) in grids.items():
        write_multirun(root / name, params, backend)
        jobs, problem = expected_jobs(root / name / "multirun.yaml")
        if problem or not jobs:
            raise RuntimeError(problem or f"{root / name}: no jobs")
        for job in jobs:
            factor = job.identity.skip_prefill or 0
            lines = {ev: eval_lines(q, factor, str(job.identity.kv_dtype), rng)
                     for ev, q in qs.items()}  # fmt: skip
            write_cell(root / name / f"{job.num}_{backend}", list(job.overrides), job.identity,
                       lines)  # fmt: skip
    return root / "base", root / "cand"
