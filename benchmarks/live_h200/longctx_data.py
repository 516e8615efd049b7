"""Training text of the long-context tasks: a JSONL of chat conversations (issue 41).

The same generator as the eval (``evals.longctx_tasks``): each row is one question's user message
and the worked reply the eval grades correct (``worked_reply``), at lengths counted in the target
model's tokens (``--tokens bytes`` for a byte-level model like synth_llama; ``hf`` with
``--tokenizer`` for another). Train on seeds the eval does not use: the eval's questions are
drawn from ``evals.<name>.seed`` (0 by default), each question from
``(seed, task, length, index)``, so another seed gives other questions.

Usage (from the repo root)::

    python -m benchmarks.live_h200.longctx_data OUT.jsonl --seed 1000 --samples 200 \
        --lengths 4096 8192 16384 32768 --tokens bytes
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evals.longctx_tasks import TASKS, sample, worked_reply
from evals.longctx_tokens import counter_for


def main() -> None:
    """Write one JSONL row per (task, length, index): task, length, tokens, messages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, required=True, help="not the eval's seed (0)")
    parser.add_argument("--samples", type=int, default=100, help="questions per task and length")
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, 8192, 16384, 32768])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--tokens", default="bytes", choices=("sim", "bytes", "hf"))
    parser.add_argument("--tokenizer", default=None, help="the HF tokenizer folder (--tokens hf)")
    args = parser.parse_args()
    counter = counter_for(args.tokens, "sglang", args.tokenizer)
    with args.out.open("w", encoding="utf-8") as out:
        for task in args.tasks:
            for length in args.lengths:
                for index in range(args.samples):
                    s = sample(task, length, args.seed, index, counter)
                    messages = [{"role": "user", "content": s.text},
                                {"role": "assistant", "content": worked_reply(s)}]  # fmt: skip
                    row = {"task": task, "length": length, "tokens": s.tokens, "messages": messages}
                    out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
