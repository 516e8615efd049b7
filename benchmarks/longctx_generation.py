"""Generation and grading time of the long-context evals at 128k tokens, per 1,000 prompts.

Issue 40 asks that generating a 128k-token prompt set and grading it add no measurable wall time
to a cell. For each counter (``sim``: the simulated server's words; ``bytes``: synth_llama's byte
tokenizer; ``hf``: the same tokenizer through transformers, the path every real model takes) and
each task, it generates ``--prompts`` prompts at ``--length`` tokens, grades each one's right
reply, and writes the seconds per 1,000 prompts (median task, slowest task) to
``benchmarks/results/longctx_generation.md``.

Usage (from the repo root): ``python -m benchmarks.longctx_generation [--prompts N] [--write]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from evals.base import EvalPrompt
from evals.eval_conf import DatasetConf, EvalConf, LongCtxConf
from evals.longctx import LongCtxEval
from evals.longctx_tasks import TASKS
from evals.longctx_tokens import counter_for

ROOT = Path(__file__).resolve().parents[1]
SYNTH_TOKENIZER = ROOT / "benchmarks/results/live-h200/trained-model/target"
RESULT = ROOT / "benchmarks/results/longctx_generation.md"


def timed_eval(
    task: str, length: int, prompts: int, tokens: str
) -> tuple[float, float, float, int]:
    """(s to generate, s to grade, s to build again from the cache, mean prompt tokens)."""
    node = LongCtxConf(task=task, lengths=[length], samples=prompts, tokens=tokens,
                       server_kind="sglang", tokenizer_path=str(SYNTH_TOKENIZER))  # fmt: skip
    conf = EvalConf(kind="longctx", dataset=DatasetConf(source="generated", path="longctx"),
                    longctx=node)  # fmt: skip
    start = time.perf_counter()
    ev = LongCtxEval(task, conf)
    generated = time.perf_counter() - start
    pairs: list[tuple[EvalPrompt, str]] = [
        (p, reply) for p, (_, reply) in zip(ev.prompts(), ev.training_text(), strict=True)
    ]
    start = time.perf_counter()
    assert all(ev.grade(p, reply)[1] for p, reply in pairs)
    graded = time.perf_counter() - start
    start = time.perf_counter()
    assert LongCtxEval(task, conf).samples == ev.samples  # the next cell of the sweep
    cached = time.perf_counter() - start
    return generated, graded, cached, round(statistics.mean(s.tokens for s in ev.samples))


def table(length: int, prompts: int) -> list[str]:
    """Markdown rows: a counter per row, seconds per 1,000 prompts."""
    counters = ["sim", "bytes"] + (["hf"] if importlib.util.find_spec("transformers") else [])
    rows = [
        "| counter | prompts per task | mean prompt tokens | generate s / 1,000 prompts "
        "(median task, slowest task) | from the cache, s / 1,000 prompts (slowest task) "
        "| grade s / 1,000 prompts (slowest task) |",
        "|---|---|---|---|---|---|",
    ]
    for counter in counters:
        start = time.perf_counter()
        counter_for(counter, "sglang", str(SYNTH_TOKENIZER))  # hf: the load, once a process
        print(f"{counter}: counter made in {time.perf_counter() - start:.2f} s", flush=True)
        runs = {task: timed_eval(task, length, prompts, counter) for task in TASKS}
        per_k = {t: 1000 * g / prompts for t, (g, _, _, _) in runs.items()}
        grade_k = max(1000 * r[1] / prompts for r in runs.values())
        cache_k = max(1000 * r[2] / prompts for r in runs.values())
        slowest = max(per_k, key=lambda t: per_k[t])
        mean_tokens = round(statistics.mean(r[3] for r in runs.values()))
        rows.append(
            f"| {counter} | {prompts} | {mean_tokens:,} | {statistics.median(per_k.values()):.1f}"
            f", {per_k[slowest]:.1f} ({slowest}) | {cache_k:.1f} | {grade_k:.3f} |"
        )
        print(rows[-1], flush=True)
    return rows


def cpu_name() -> str:
    """The CPU's model name (Linux), else the machine type."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.machine()


def main() -> None:
    """Measure and print; ``--write`` also writes the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=131072)
    parser.add_argument("--prompts", type=int, default=5, help="prompts per task and counter")
    parser.add_argument("--write", action="store_true", help=f"write {RESULT.name}")
    args = parser.parse_args()
    # A fresh question cache (evals/longctx_cache.py): the first build generates, the second reads.
    os.environ["MTP_EVAL_CACHE"] = tempfile.mkdtemp(prefix="longctx-bench-")
    rows = table(args.length, args.prompts)
    head = [
        "# Long-context eval generation time",
        "",
        f"`python -m benchmarks.longctx_generation --length {args.length} --prompts "
        f"{args.prompts} --write`, {time.strftime('%Y-%m-%d')}, {cpu_name()} "
        f"({os.cpu_count()} cores shared with other work), Python {platform.python_version()}: "
        f"each of the 6 tasks generates {args.prompts} prompts of {args.length:,} tokens, "
        "then grades each one's right reply, then is built again as the next cell of a sweep "
        "builds it (from the question cache, `evals/longctx_cache.py`); seconds per 1,000 "
        "prompts. The hf tokenizer's load "
        "(once a process, shared by a cell's six tasks) is left out.",
        "",
    ]
    if args.write:
        RESULT.write_text("\n".join([*head, *rows, ""]), encoding="utf-8")


if __name__ == "__main__":
    main()
