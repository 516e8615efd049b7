"""How much skip-softmax skips on the long-context speed prompts, per prompt length (issue 41).

    python3 -m benchmarks.live_h200.longctx_skip TARGET OUT.json --source 133120 --samples 4 \
        --lengths 16384 32768 65536 131072 [--factors 1e4,3e4,1e5,1e6]

``LIVE_PLAN=longctx-frontier``'s speed cells prefill the ``longctx_niah_single`` eval's questions
of ``--source`` tokens (eval seed 0, byte lengths), rendered by the model's chat template, cut to
each length (``speed.prompts=eval:longctx_niah_single``). This counts the tiles the kernel's rule
skips on exactly those ids: HF runs each question once, recording every layer's post-RoPE q, k
and v (``skip_fraction.capture_attention``), and each length's prefix is tallied from the
recording (the model is causal: a prefix's q, k, v are its own) by the kernel probe's reference,
per KV tile (bf16 128 keys, fp8 256) and factor. ``skip_fraction`` pools every length
(tile-weighted: the longest weigh most), the shape ``mtp-eval-report --skip-fractions`` reads;
``per_length`` has each length's own shares. Runs on the machine's python, GPU when there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.live_h200 import skip_fraction as sf

TASK = "niah_single"  # the eval the speed cells take their prompts from


def question_ids(tok: Any, source: int, samples: int, seed: int = 0) -> list[list[int]]:
    """The chat ids of the eval's first ``samples`` questions at ``source`` tokens (its order)."""
    from evals.chat_tokens import chat_ids
    from evals.longctx_tasks import sample
    from evals.longctx_tokens import ByteCounter

    texts = [sample(TASK, source, seed, i, ByteCounter()).text for i in range(samples)]
    return [chat_ids(tok, [{"role": "user", "content": text}]) for text in texts]


def tally_lengths(
    model: Any, ids: list[int], lengths: list[int], factors: tuple[float, ...]
) -> list[dict[str, Any]]:
    """One forward over ``ids``; the tally of each length it reaches (a row per length)."""
    import torch

    sf.CAPTURED.clear()
    with torch.no_grad():
        model(input_ids=torch.tensor([ids], device=model.device))
    return [{"tokens": n, **sf.tally_captured(sf.CAPTURED, n, factors)}
            for n in lengths if n <= len(ids)]  # fmt: skip


def shares(rows: list[dict[str, Any]], factors: tuple[float, ...]) -> dict[str, dict[str, float]]:
    """Skipped over all tiles of ``rows`` per KV dtype and factor, as ``skip_fraction`` writes."""
    return {kv: {str(f): round(x, 5) for f, x in table.items()}
            for kv, table in sf.fractions(rows, factors).items()}  # fmt: skip


def summarise(rows: list[dict[str, Any]], factors: tuple[float, ...]) -> dict[str, Any]:
    """The shares pooled over every row, and per length (none for a length never reached)."""
    lengths = sorted({r["tokens"] for r in rows})
    return {
        "skip_fraction": shares(rows, factors),
        "per_length": {str(n): shares([r for r in rows if r["tokens"] == n], factors)
                       for n in lengths},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Tally the speed prompts at each length; write the JSON; 1 when a length was never reached."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--source", type=int, required=True, help="the questions' length")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--factors", type=sf.parse_factors, default=(1e4, 3e4, 1e5, 1e6))
    args = parser.parse_args(argv)
    start = time.time()
    tok, model = sf.load(args.target)
    prompts = question_ids(tok, args.source, args.samples)
    rows = [row for ids in prompts for row in tally_lengths(model, ids, args.lengths, args.factors)]
    found = {
        "task": TASK, "source_tokens": args.source, "prompt_tokens": [len(p) for p in prompts],
        "lengths": args.lengths, "factors": list(args.factors), "kv_tiles": sf.KV_TILES,
        "max_rows_per_layer": sf.MAX_ROWS, **summarise(rows, args.factors), "rows": rows,
        "seconds": round(time.time() - start, 1), "device": str(model.device),
    }  # fmt: skip
    args.out.write_text(json.dumps(found, indent=1) + "\n")
    missing = sorted(set(args.lengths) - {r["tokens"] for r in rows})
    print("longctx_skip: bf16-tile shares per length",
          json.dumps({n: t["auto"] for n, t in found["per_length"].items()}))  # fmt: skip
    if missing:
        print(f"longctx_skip: no prompt reached {missing} tokens (--source too short)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
