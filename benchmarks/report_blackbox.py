"""Black-box check of ``mtp-eval-report`` on synthetic sweeps written to disk.

An independent generator: it imports nothing from ``pipeline`` for the truth, the files or the
verdicts (only a sequential candidate's stopping asks
``pipeline.measuring.sequential_run.look``, as a real sequential cell does). Each replication
writes a sweep folder as a real run leaves it (Hydra's ``multirun.yaml``, one folder per job with
``.hydra/overrides.yaml``, ``result.json`` and ``samples/gpqa_diamond.jsonl``; lines and error
lines shaped like a simulated-server cell's), runs the installed ``mtp-eval-report`` on it as a
subprocess, and reads back the exit code and ``summary.json``.

Truth: 198 questions, success probabilities drawn once from a Beta law (mean 0.70, one repeat's
accuracy SD 1.5 points), 8 repeats (0-based unless asked). Shapes of a drop: diffuse (every
question in proportion), uncertain (only 0.15 < p < 0.85), few (near-certain questions go to
always wrong). ``--condition`` names are listed in ``CONDITIONS``.

    nice python -m benchmarks.report_blackbox --reps 200 --out benchmarks/results/report_blackbox.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

N_Q, K, EVAL, MODEL = 198, 8, "gpqa_diamond", "bbx-model"
GPU = {"name": "NVIDIA H200", "compute_capability": "9.0", "sm": 90, "family": "SM90", "count": 1,
       "memory_mib": 143771, "driver_version": "570.86.15", "source": "nvidia-smi"}  # fmt: skip
SPEC = {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4,
        "draft_model_path": None, "extra_args": []}  # fmt: skip
CANDIDATES = ["fmha_v2", "trtllm_mha", "flashinfer", "triton"]
Lines = list[dict[str, Any]]
HTTP_500 = (
    'HTTP 500: {"object": "error", "message": "Internal server error", '
    '"type": "InternalServerError", "param": null, "code": 500}'
)  # as a real cell logs it
# The anytime design cells run by default (pipeline/stats/anytime.py), planned to 32 repeats.
SEQ: dict[str, Any] = {"max_repeats": 32, "repeats_per_round": 2, "alpha": 0.05, "margin": 0.02,
       "spending": "obrien_fleming", "statistic": "eprocess"}  # fmt: skip


@dataclass(frozen=True)
class Condition:
    """One synthetic situation: the first candidate's truth and the sweep's shape."""

    drop: float = 0.0  # accuracy points the first candidate loses
    shape: str = "diffuse"
    n_cand: int = 1
    err_base: float = 0.0
    err_cand: float = 0.0
    err_on_wrong: bool = False  # the first candidate's errors fall only on its wrong answers
    trunc: float = 0.0  # truncations on both sides (a truncated answer is wrong)
    missing_hardest: int = 0  # questions the first candidate never asked (the hardest)
    cand_repeat_offset: int = 0  # 1: candidates' repeat indices are 1-based
    two_baselines: bool = False  # an old, 6-point-better baseline that ended earlier, listed last
    malformed: str = ""  # how the first candidate's result.json is broken
    sequential: bool = False
    single_question: bool = False
    notes: str = ""


CONDITIONS: dict[str, Condition] = {
    "clean": Condition(),
    "margin-diffuse": Condition(drop=2),
    "margin-uncertain": Condition(drop=2, shape="uncertain"),
    "margin-few": Condition(drop=2, shape="few"),
    "5pt-diffuse": Condition(drop=5),
    "5pt-uncertain": Condition(drop=5, shape="uncertain"),
    "5pt-few": Condition(drop=5, shape="few"),
    "clean-err3-base": Condition(err_base=0.03),
    "clean-err4.9-base": Condition(err_base=0.049),
    "clean-err3-cand": Condition(err_cand=0.03),
    "clean-err4.9-cand": Condition(err_cand=0.049),
    "margin-err4.9-base": Condition(drop=2, err_base=0.049),
    "margin-err4.9-cand": Condition(drop=2, err_cand=0.049),
    "3pt-err4.9-cand-on-wrong": Condition(drop=3, err_cand=0.049, err_on_wrong=True),
    "3pt-err4.9-cand": Condition(drop=3, err_cand=0.049),
    "clean-trunc3": Condition(trunc=0.03),
    "clean-4cand": Condition(n_cand=4),
    "clean-8cand": Condition(n_cand=8),
    "margin-8cand": Condition(drop=2, n_cand=8),
    "clean-missing18": Condition(missing_hardest=18),
    "clean-repeats1based": Condition(cand_repeat_offset=1),
    "clean-two-baselines": Condition(two_baselines=True),
    "seq-clean": Condition(sequential=True),
    "seq-margin": Condition(drop=2, sequential=True),
    "seq-5pt-diffuse": Condition(drop=5, sequential=True),
    "seq-clean-8cand": Condition(sequential=True, n_cand=8),
    "seq-5pt-uncertain-8cand": Condition(drop=5, shape="uncertain", sequential=True, n_cand=8),
    "single-question": Condition(single_question=True),
    **{
        f"malformed-{m}": Condition(malformed=m)
        for m in (
            "seq-empty",
            "seq-nan-look",
            "seq-str-look",
            "seq-bad-design",
            "no-evals-key",
            "accuracy-nan",
            "counts-str",
            "evals-list",
            "cell-missing",
            "samples-bad-repeat",
        )
    },
}


def difficulties(rng: np.random.Generator) -> np.ndarray:
    """p_i ~ Beta(a, b), mean 0.70, sum p(1-p) set so one repeat's accuracy has SD 1.5 pts."""
    target = (0.015 * N_Q) ** 2 / N_Q  # mean p(1-p)
    s = target / (0.21 - target)  # E[p(1-p)] = m(1-m) s/(s+1)
    while True:  # a question set whose mean and spread are those stated (within a hair)
        p = rng.beta(0.7 * s, 0.3 * s, N_Q)
        sd = math.sqrt(np.sum(p * (1 - p))) / N_Q
        if abs(p.mean() - 0.70) < 0.003 and abs(sd - 0.015) < 0.0005:
            return p


def dropped(p: np.ndarray, pts: float, shape: str) -> np.ndarray:
    """The candidate's probabilities after losing ``pts`` accuracy points in ``shape``."""
    loss, q = pts / 100 * len(p), p.copy()
    if loss <= 0:
        return q
    if shape == "diffuse":
        return q * (1 - loss / q.sum())
    if shape == "uncertain":
        idx = np.where((p > 0.15) & (p < 0.85))[0]
        w = p[idx] * (1 - p[idx])
        q[idx] = np.clip(p[idx] - loss * w / w.sum(), 0, 1)
        return q
    for i in np.argsort(-p):  # few: the surest questions break first
        take = min(q[i], loss)
        q[i] -= take
        loss -= take
        if loss <= 1e-12:
            break
    return q


def qid(i: int) -> str:
    return hashlib.sha256(f"bbx-question-{i}".encode()).hexdigest()[:16]


def sample_line(i: int, r: int, correct: bool, rng: np.random.Generator, err: float,
                trunc: float) -> dict[str, Any]:  # fmt: skip
    """One request as a cell writes it: answered, truncated, or an HTTP 500 error line."""
    base = {"question_id": qid(i), "repeat": r, "permutation": [int(x) for x in rng.permutation(4)],
            "prompt_hash": hashlib.sha256(f"{i}-{r}".encode()).hexdigest()[:16],
            "answer": "ABCD"[i % 4]}  # fmt: skip
    u = rng.random()
    if u < err:
        return {**base, "response": None, "reasoning_content": None, "extracted": None,
                "correct": False, "finish_reason": None, "prompt_tokens": None,
                "completion_tokens": None, "latency_s": 0.03, "attempts": 5,
                "error_kind": "http_5xx", "error": HTTP_500,
                "spec": None}  # fmt: skip
    truncated = u < err + trunc
    letter = "ABCD"[i % 4] if correct and not truncated else "ABCD"[(i + 1) % 4]
    tokens = 2048 if truncated else int(rng.integers(120, 400))
    verify = max(1, round(tokens / rng.normal(2.6, 0.2)))
    proposed = 3 * verify
    return {**base, "response": "... Answer: " + ("" if truncated else letter),
            "reasoning_content": None, "extracted": None if truncated else letter,
            "correct": bool(correct and not truncated),
            "finish_reason": "length" if truncated else "stop", "prompt_tokens": 70,
            "completion_tokens": tokens, "latency_s": 0.04, "attempts": 1, "error_kind": None,
            "error": None, "spec": {"verify_ct": verify, "num_correct_drafts": tokens - verify,
            "num_proposed_drafts": proposed, "completion_tokens": tokens,
            "accept_length": tokens / verify, "accept_rate": (tokens - verify) / proposed,
            "histogram": [0, 0, 0, 0], "source": "sglext"}}  # fmt: skip


@dataclass
class Cell:
    """One cell to write: its job, identity and lines."""

    num: int
    variant: str
    skip: float | None
    lines: list[dict[str, Any]]
    ended_at: str
    sequential: dict[str, Any] | None = None
    overrides: list[str] = field(default_factory=list)


def draw_lines(p: np.ndarray, rng: np.random.Generator, repeats: range, err: float, trunc: float,
               skip_q: set[int] = frozenset(), on_wrong: bool = False,  # type: ignore[assignment]
               ) -> list[dict[str, Any]]:  # fmt: skip
    out = []
    # On wrong answers only: the same overall rate, all of it on requests it got wrong.
    wrong_err = min(1.0, err / max(1e-9, 1 - float(p.mean())))
    for r in repeats:
        hits = rng.random(len(p)) < p
        out += [sample_line(i, r, bool(hits[i]), rng,
                            (0.0 if hits[i] else wrong_err) if on_wrong else err, trunc)
                for i in range(len(p)) if i not in skip_q]  # fmt: skip
    return out


def eval_block(lines: list[dict[str, Any]], seq: dict[str, Any] | None) -> dict[str, Any]:
    """``evals.<name>`` as a cell writes it (accuracy over answered and unanswered requests)."""
    n = len(lines)
    c = Counter("error" if x["error_kind"] else "truncated" if x["finish_reason"] == "length"
                else "correct" if x["correct"] else "wrong" for x in lines)  # fmt: skip
    qs = sorted({x["question_id"] for x in lines})
    reps = sorted({x["repeat"] for x in lines})
    per_q = [np.mean([x["correct"] for x in lines if x["question_id"] == q]) for q in qs]
    acc = float(np.mean([x["correct"] for x in lines]))
    se = float(np.std(per_q, ddof=1) / math.sqrt(len(qs))) if len(qs) > 1 else float("nan")
    block = {"label": "GPQA Diamond", "kind": "gpqa", "sampling": {"temperature": 0.0,
             "top_p": None, "top_k": None, "min_p": None, "max_tokens": 2048, "seed": None,
             "source": "model"}, "n_questions": len(qs), "n_repeats": len(reps),
             "n_samples": n, "accuracy": acc, "stderr": se,
             "stderr_method": "clustered by question over repeats",
             "ci95": [acc - 1.96 * se, acc + 1.96 * se],
             "per_repeat_accuracy": {str(r): float(np.mean([x["correct"] for x in lines
                                     if x["repeat"] == r])) for r in reps},
             "counts": {k: c.get(k, 0) for k in ("correct", "wrong", "no_answer", "truncated",
                                                  "error")},
             "no_answer_rate": 0.0, "truncated_rate": c.get("truncated", 0) / n,
             "error_rate": c.get("error", 0) / n, "mean_completion_tokens": 250.0,
             "mean_prompt_tokens": 70.0, "total_completion_tokens": 250 * n,
             "wall_time_s": 60.0, "graded": True, "resumed_samples": 0}  # fmt: skip
    if seq is not None:
        block["sequential"] = seq
    return block


def result_json(cell: Cell) -> dict[str, Any]:
    """A real cell's ``result.json`` (the keys a cell writes; values of a plausible H200 run)."""
    answered = [x for x in cell.lines if x["spec"]]
    tokens = sum(x["spec"]["completion_tokens"] for x in answered)
    verify = sum(x["spec"]["verify_ct"] for x in answered)
    skip = {"prefill": cell.skip, "decode": None}
    observed = {"attention_backend": cell.variant, "kv_cache_dtype": "auto", "page_size": 64,
                "speculative_algorithm": "EAGLE", "speculative_num_steps": 3,
                "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4,
                "model_path": "org/bbx-model", "served_model_name": MODEL}  # fmt: skip
    return {"schema_version": 1, "status": "ok", "simulated": False,
            "cell": {"name": f"{MODEL}/{cell.variant}/auto/sp={cell.skip}/sd=None",
                     "model": MODEL, "model_path": "org/bbx-model", "variant": cell.variant,
                     "kv_dtype": "auto", "skip_softmax": skip, "speculative": SPEC,
                     "server_kind": "sglang", "gpu": GPU, "sglang_version": "0.5.19",
                     "server_version": "0.5.19"},
            "config_hash": hashlib.sha256(repr(cell.overrides).encode()).hexdigest()[:16],
            "config": {}, "preflight": [], "warnings": [], "notes": [],
            "runs": {"prefill": cell.variant, "decode": cell.variant},
            "requested": dict(observed), "observed": observed, "mismatches": [],
            "evals": {EVAL: eval_block(cell.lines, cell.sequential)},
            "accept": {"n_requests": len(answered), "n_with_spec": len(answered), "status": "ok",
                       "accept_length": tokens / verify, "accept_length_stderr": 0.01,
                       "accept_rate": 0.53, "completion_tokens": tokens, "verify_ct": verify},
            "server": {}, "provenance": {"mtp_eval_sha": "0" * 40}, "error": None,
            "timing": {"started_at": cell.ended_at, "ended_at": cell.ended_at},
            "label_runs": {}, "unverified": [], "client": {}}  # fmt: skip


def break_result(res: dict[str, Any], how: str) -> None:
    """Make the first candidate's result malformed in the way ``how`` names."""
    ev = res["evals"][EVAL]
    if how == "seq-empty":
        ev["sequential"] = {}
    elif how == "seq-nan-look":
        ev["sequential"] = {**SEQ, "role": "candidate", "look": float("nan"), "decision": "GO"}
    elif how == "seq-str-look":
        ev["sequential"] = {**SEQ, "role": "candidate", "look": "3", "decision": "GO"}
    elif how == "seq-bad-design":
        ev["sequential"] = {**SEQ, "repeats_per_round": 0, "role": "candidate", "look": 1}
    elif how == "no-evals-key":
        del res["evals"]
    elif how == "accuracy-nan":
        ev["accuracy"], ev["stderr"] = float("nan"), float("nan")
    elif how == "counts-str":
        ev["counts"], ev["n_repeats"] = "many", "eight"
    elif how == "evals-list":
        res["evals"] = [ev]
    elif how == "cell-missing":
        del res["cell"]


def plan_cells(cond: Condition, rng: np.random.Generator, p: np.ndarray) -> list[Cell]:
    """Baseline(s) and candidates with their lines (sequential candidates stop as a cell does)."""
    skips: list[float | None] = [None] if cond.n_cand <= 4 else [None, 0.5]
    variants = CANDIDATES[: min(cond.n_cand, 4)]
    base_reps = range(SEQ["max_repeats"]) if cond.sequential else range(K)
    cells, num, base_lines = [], 0, {}
    for skip in skips:
        lines = draw_lines(p, rng, base_reps, cond.err_base, cond.trunc)
        base_lines[skip] = lines
        cells.append(Cell(num, "fa3", skip, lines, "2026-11-30T10:00:00+00:00",
                          {**SEQ, "role": "baseline"} if cond.sequential else None))  # fmt: skip
        num += 1
        for j, v in enumerate(variants):
            first = skip == skips[0] and j == 0
            q = dropped(p, cond.drop, cond.shape) if first else p
            skip_q = set(np.argsort(p)[: cond.missing_hardest]) if first else set()
            off = cond.cand_repeat_offset
            if cond.sequential:
                lines, seq = sequential_candidate(q, rng, cond, base_lines[skip])
            else:
                lines, seq = draw_lines(q, rng, range(off, K + off), cond.err_cand, cond.trunc,
                                        skip_q, cond.err_on_wrong and first), None  # fmt: skip
            cells.append(Cell(num, v, skip, lines, "2026-11-30T11:00:00+00:00", seq))
            num += 1
    return cells


def sequential_candidate(q: np.ndarray, rng: np.random.Generator, cond: Condition,
                         baseline: Lines) -> tuple[Lines, dict[str, Any]]:  # fmt: skip
    """Rounds of 2 repeats, a look after each, as ``measuring.sequential_run`` runs them."""
    from pipeline.config.schema import SequentialConf
    from pipeline.measuring.sequential_run import design_of, look
    from pipeline.results.eval_block import DESIGN_KEYS

    # As a cell does: NO-GO's alpha split over the sweep's candidates (one eval).
    design = design_of(SequentialConf(True, **SEQ), cond.n_cand)
    fields = {k: getattr(design, k) for k in DESIGN_KEYS}
    lines: list[dict[str, Any]] = []
    decision, index = None, 0
    for index in range(1, design.n_looks + 1):
        start = (index - 1) * SEQ["repeats_per_round"]
        lines += draw_lines(q, rng, range(start, start + SEQ["repeats_per_round"]),
                            cond.err_cand, cond.trunc)  # fmt: skip
        decision = look(lines, baseline, design, index)
        if decision is not None:
            break
    return lines, {**fields, "role": "candidate", "baseline_dir": "", "look": index,
                   "decision": decision or "undecided"}  # fmt: skip


def job_overrides(cell: Cell, n_skips: int) -> list[str]:
    out = [f"model={MODEL}", f"evals=[{EVAL}]", f"backend={cell.variant}"]
    return out + ([f"skip_softmax.prefill={cell.skip if cell.skip is not None else 0}"]
                  if n_skips > 1 else [])  # fmt: skip


def write_sweep(root: Path, cond: Condition, cells: list[Cell]) -> None:
    """The sweep folder: multirun.yaml, then each job's folder."""
    variants = ["fa3", *CANDIDATES[: min(cond.n_cand, 4)]]
    skips = sorted({c.skip for c in cells}, key=lambda s: s or 0)
    swept = [f"backend={','.join(variants)}"]  # as typed on the command line (-m)
    if len(skips) > 1:
        swept.append("skip_softmax.prefill=" + ",".join(str(s or 0) for s in skips))
    multirun = {"hydra": {"mode": "MULTIRUN", "sweep": {"dir": str(root), "subdir": "x"},
                          "sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper."
                                      "BasicSweeper", "max_batch_size": None, "params": None},
                          "overrides": {"hydra": [f"hydra.sweep.dir={root}", "hydra.mode=MULTIRUN"],
                                        "task": [f"model={MODEL}", f"evals=[{EVAL}]", *swept]},
                          "runtime": {"choices": {"model": MODEL, "backend": "fa3",
                                                  "kv_dtype": "auto"}}},
                "model": {"name": MODEL, "path": "org/bbx-model", "speculative": SPEC},
                "backend": {"name": "fa3"}, "kv_dtype": {"name": "auto"},
                "skip_softmax": {"prefill": None, "decode": None}}  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    (root / "multirun.yaml").write_text(yaml.safe_dump(multirun, sort_keys=False))
    # Hydra numbers jobs by the cartesian product: backend outer, skip inner.
    order = {(v, s): i for i, (v, s) in enumerate((v, s) for v in variants for s in skips)}
    for cell in cells:
        cell.num = order[(cell.variant, cell.skip)]
        cell.overrides = [*(["model=" + MODEL, f"evals=[{EVAL}]"]), f"backend={cell.variant}"]
        if len(skips) > 1:
            cell.overrides = [*cell.overrides[:2], f"backend={cell.variant}",
                              f"skip_softmax.prefill={cell.skip or 0}"]  # fmt: skip
        skip_name = "exact" if not cell.skip else f"skip-p{cell.skip}"
        folder = root / f"{cell.num}_{MODEL}_{cell.variant}_auto_{skip_name}"
        (folder / ".hydra").mkdir(parents=True)
        (folder / "samples").mkdir()
        (folder / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(cell.overrides))
        (folder / "cli.log").write_text("")
        if cell.sequential and cell.sequential.get("role") == "candidate":
            base = next(c for c in cells if c.variant == "fa3" and c.skip == cell.skip)
            cell.sequential["baseline_dir"] = str(
                root / f"{base.num}_{MODEL}_fa3_auto_{'exact' if not base.skip else 'skip-p0.5'}"
            )
        res = result_json(cell)
        if cond.malformed and cell.variant == CANDIDATES[0] and cell.skip is None:
            break_result(res, cond.malformed)
        (folder / "result.json").write_text(json.dumps(res, indent=1))
        lines = cell.lines
        text = "".join(json.dumps(x) + "\n" for x in lines)
        if cond.malformed == "samples-bad-repeat" and cell.variant == CANDIDATES[0]:
            text = text.replace('"repeat": 3,', '"repeat": "3",', 1)
        (folder / "samples" / f"{EVAL}.jsonl").write_text(text)
        (folder / "samples" / "CONFIG_HASH").write_text(res.get("config_hash", "") + "\n")


def add_old_baseline(root: Path, p: np.ndarray, rng: np.random.Generator) -> None:
    """A second, earlier fa3 cell 6 points better (a left-over resume copy, same job)."""
    better = np.clip(p + 0.06 * (1 - p) / np.mean(1 - p), 0, 1)
    cell = Cell(
        0, "fa3", None, draw_lines(better, rng, range(K), 0, 0), "2026-11-29T09:00:00+00:00"
    )
    cell.overrides = [f"model={MODEL}", f"evals=[{EVAL}]", "backend=fa3"]
    folder = root / "zz_old_baseline" / f"0_{MODEL}_fa3_auto_exact"
    (folder / "samples").mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(result_json(cell), indent=1))
    (folder / "samples" / f"{EVAL}.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in cell.lines)
    )


def one_run(cond: Condition, p: np.ndarray, rng: np.random.Generator, work: Path
            ) -> dict[str, Any]:  # fmt: skip
    """Write one sweep, report it, and read what the report said about the first candidate."""
    root = work / "sweep"
    shutil.rmtree(work, ignore_errors=True)
    if cond.single_question:
        p = p[:1]
    cells = plan_cells(cond, rng, p)
    write_sweep(root, cond, cells)
    inputs = [str(root)]
    if cond.two_baselines:
        add_old_baseline(work / "old", p, rng)
        inputs = [str(root), str(work / "old")]
    proc = subprocess.run(["mtp-eval-report", *inputs, "--out", str(work / "report")],
                          capture_output=True, text=True, check=False)  # fmt: skip
    out: dict[str, Any] = {"rc": proc.returncode, "stderr": proc.stderr[-600:]}
    try:
        summary = json.loads((work / "report" / "summary.json").read_text())
    except (OSError, ValueError):
        out["verdict"] = "NO SUMMARY"
        return out
    # By folder: a malformed result may not say which variant it is.
    tail = f"_{MODEL}_{CANDIDATES[0]}_auto_exact"
    first = next((c for c in summary["cells"] if str(c["id"]).endswith(tail)), None)
    out["verdict"] = first["verdict"] if first else "ABSENT"
    acc = [ch for ch in (first or {}).get("checks", []) if ch["kind"] == "accuracy_vs_baseline"]
    out["acc"] = acc[0]["verdict"] if acc else "-"
    out["acc_msg"] = acc[0]["message"][:300] if acc else ""
    out["release"] = summary["verdict"]
    stopped = next(c.sequential for c in cells if c.variant == CANDIDATES[0])
    if stopped and stopped.get("decision") in ("GO", "NO-GO") and out["verdict"] != "ERROR":
        # A cell the stopping rule decided: the report must not say otherwise.
        said = {"GO": "GO", "NO-GO": "NO-GO", "FAIL": "NO-GO"}.get(out["verdict"], "other")
        out["disagree"] = said != stopped["decision"]
    out["others"] = Counter(c["verdict"] for c in summary["cells"] if c is not first)
    return out


def wilson(k: int, n: int) -> str:
    if n == 0:
        return "-"
    z, ph = 1.96, k / n
    d = 1 + z * z / n
    c = (ph + z * z / (2 * n)) / d
    h = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / d
    return f"{100 * ph:.1f}% [{100 * max(0, c - h):.1f}, {100 * min(1, c + h):.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=14014)
    ap.add_argument("--condition", action="append",
                    help="NAME or NAME:REPS, names from CONDITIONS (default all)")  # fmt: skip
    ap.add_argument("--out", type=Path, help="append the table rows here (Markdown)")
    ap.add_argument("--show", type=int, default=2, help="messages to print per odd outcome")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    p = difficulties(rng)
    sd = 100 * math.sqrt(np.sum(p * (1 - p))) / N_Q
    print(f"difficulty: mean {p.mean():.3f}, repeat SD {sd:.2f} pts, "
          f"uncertain {int(np.sum((p > 0.15) & (p < 0.85)))}", flush=True)  # fmt: skip
    rows = []
    for spec in args.condition or list(CONDITIONS):
        name, _, count = spec.partition(":")
        cond = CONDITIONS[name]
        reps = int(count) if count else args.reps
        if not count and (cond.malformed or cond.single_question):
            reps = min(args.reps, 20)  # deterministic faults: a few runs show them
        seen: Counter[str] = Counter()
        rcs: Counter[int] = Counter()
        releases: Counter[str] = Counter()
        shown: Counter[str] = Counter()
        t0 = time.time()
        with tempfile.TemporaryDirectory(prefix="bbx-") as tmp:
            for _ in range(reps):
                res = one_run(cond, p, rng, Path(tmp) / "w")
                seen[res["verdict"]] += 1
                rcs[res["rc"]] += 1
                if res.get("disagree"):
                    seen["(stopped cell and report disagree)"] += 1
                releases[res.get("release", "-")] += 1
                key = f"{res['verdict']}/rc{res['rc']}"
                odd = res["rc"] not in (0, 1, 2) or res["verdict"] not in ("GO", "NO-GO")
                if shown[key] < args.show and (odd or cond.malformed):
                    shown[key] += 1
                    print(f"  [{name}] {key} acc={res.get('acc')}: {res.get('acc_msg', '')[:240]}"
                          f" {res['stderr'][-300:]}", flush=True)  # fmt: skip
        per = (time.time() - t0) / reps
        nogo = seen["NO-GO"] + seen["FAIL"]
        row = (f"| {name} | {reps} | {wilson(seen['GO'], reps)} | {wilson(nogo, reps)} | "
               f"{', '.join(f'{k} {v}' for k, v in sorted(seen.items()))} | "
               f"{', '.join(f'{k}:{v}' for k, v in sorted(rcs.items()))} | "
               f"{', '.join(f'{k} {v}' for k, v in sorted(releases.items()))} | "
               f"{per:.1f} |")  # fmt: skip
        print(row, flush=True)
        rows.append(row)
    if args.out:
        head = (
            "| condition | runs | first candidate GO | NO-GO or FAIL | its verdicts | "
            "exit codes | report verdicts | s/run |\n|---|---|---|---|---|---|---|---|\n"
        )
        new = not args.out.exists()
        with args.out.open("a") as fh:
            if new:
                fh.write(head)
            fh.write("\n".join(rows) + "\n")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, load {os.getloadavg()}",
          file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    main()
