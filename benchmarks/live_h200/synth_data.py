"""Write (and re-derive) the bundled eval files of the synthetic tasks, from one fixed seed.

    python -m benchmarks.live_h200.synth_data          # rewrites evals/data/synth_*.{jsonl,csv}
    python -m benchmarks.live_h200.synth_data --check  # exit 1: the committed files differ

The files are the held-out sets of the trained model (``benchmarks/live_h200/train_model.py``
never trains on their questions). Columns follow the eval kind that reads them: GSM8K's
``question`` / ``answer`` ("... #### N") and GPQA's ``Question`` / ``Correct Answer`` /
``Incorrect Answer 1..3``, each with a ``level`` (``Level``) column saying how hard the row is.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
from pathlib import Path

from benchmarks.live_h200 import synth_tasks as tasks
from evals.datasets import DATA_DIR
from evals.gsm8k import format_prompt as gsm8k_prompt

EVAL_SEED = 15
ARITH_PER_LEVEL = 50
MCQ_PER_LEVEL = 60
RETRIEVAL_PER_LENGTH = 12
# Prompt lengths in tokens of the byte-level tokenizer (chat template included).
RETRIEVAL_PROMPT_TOKENS = (4096, 8192, 12288, 16896)
# Chat-template tokens around one user turn and the assistant header (train_model.CHAT_TEMPLATE).
CHAT_OVERHEAD_TOKENS = 15
FILES = {
    "arith": "synth_arith.jsonl",
    "mcq": "synth_mcq.csv",
    "retrieval": "synth_retrieval.jsonl",
}
MCQ_COLUMNS = ("Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
               "Incorrect Answer 3", "Level")  # fmt: skip


def _unique(draw: object, count: int) -> list[tasks.Example]:
    """``count`` examples with distinct questions from the zero-argument callable ``draw``."""
    seen: dict[str, tasks.Example] = {}
    while len(seen) < count:
        example = draw()  # type: ignore[operator]
        seen.setdefault(example.question, example)
    return list(seen.values())


def arith_rows(seed: int = EVAL_SEED) -> list[dict[str, object]]:
    """The arithmetic eval rows, ``ARITH_PER_LEVEL`` per level."""
    rng = random.Random(f"{seed}:arith")
    rows = []
    for level in tasks.ARITH_LEVELS:
        for ex in _unique(lambda lv=level: tasks.arith_example(rng, lv), ARITH_PER_LEVEL):
            rows.append({"question": ex.question, "answer": tasks.gsm8k_answer(ex), "level": level})
    return rows


def mcq_rows(seed: int = EVAL_SEED) -> list[dict[str, object]]:
    """The multiple-choice eval rows, ``MCQ_PER_LEVEL`` per level, correct option first."""
    rng = random.Random(f"{seed}:mcq")
    rows = []
    for level in tasks.MCQ_LEVELS:
        for ex in _unique(lambda lv=level: tasks.mcq_example(rng, lv), MCQ_PER_LEVEL):
            rows.append(dict(zip(MCQ_COLUMNS, (ex.question, ex.gold, *ex.distractors, level),
                                 strict=True)))  # fmt: skip
    return rows


def retrieval_chars(prompt_tokens: int) -> int:
    """Question length that makes a GSM8K-template chat prompt ``prompt_tokens`` long."""
    return prompt_tokens - len(gsm8k_prompt("")) - CHAT_OVERHEAD_TOKENS


def retrieval_rows(seed: int = EVAL_SEED) -> list[dict[str, object]]:
    """The long-context eval rows, ``RETRIEVAL_PER_LENGTH`` per prompt length."""
    rng = random.Random(f"{seed}:retrieval")
    rows = []
    for tokens in RETRIEVAL_PROMPT_TOKENS:
        for _ in range(RETRIEVAL_PER_LENGTH):
            ex = tasks.retrieval_example(rng, retrieval_chars(tokens), level=tokens)
            answer = tasks.gsm8k_answer(ex)
            rows.append({"question": ex.question, "answer": answer, "level": tokens})
    return rows


def render(kind: str) -> str:
    """The text of one bundled file, exactly as committed."""
    if kind == "mcq":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=MCQ_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(mcq_rows())
        return out.getvalue()
    rows = arith_rows() if kind == "arith" else retrieval_rows()
    return "".join(json.dumps(row) + "\n" for row in rows)


def held_out_questions() -> set[str]:
    """Every eval question text: the training stream skips these."""
    questions = {str(r["question"]) for r in arith_rows() + retrieval_rows()}
    return questions | {str(r["Question"]) for r in mcq_rows()}


def main(argv: list[str] | None = None) -> int:
    """Write the files, or with ``--check`` report which differ from the code's output."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--dir", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    stale = []
    for kind, name in FILES.items():
        path, text = args.dir / name, render(kind)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"synth_data: wrote {path} ({len(text):,} bytes)")
    if stale:
        fix = "run python -m benchmarks.live_h200.synth_data"
        print(f"synth_data: differ from the code: {stale}; {fix}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
