"""How much fmha_v2's skip-softmax would skip on the long-context eval's real prompts.

The kernel probe's estimate (``backends.probe.reference``: per 64 query rows and key tile, the tile
is skipped when ``exp(tile max - running max) < factor / seqlen`` for every row) is computed here on
the trained model's own queries and keys: HF transformers runs each ``synth_retrieval`` prompt
(rendered by the eval class and the saved chat template, as SGLang sees it) with an attention
function that records every layer's post-RoPE q, k and v, and the probe's fp32 reference tallies
the tiles per factor on a spread of 64-row blocks of every layer. It also reports how far the
attention output moves when exactly those tiles are dropped (the skip-aware reference), per factor.

Then it picks the factors of the live cells: ``moderate`` is the smallest factor of the grid that
skips at least ``--moderate`` of the tiles (bf16 KV tile), ``aggressive`` the smallest that skips
at least ``--aggressive``; a grid that never gets there gives its two largest factors, and says so.

    python3 -m benchmarks.live_h200.skip_fraction TARGET OUT.json [--env F.env] [--factors 1e4,3e4]

``--factors`` measures another grid (the factors a sweep runs: ``mtp-eval-report
--skip-fractions OUT.json`` shows a cell's share only when its factor is in the grid).
``--random-ids 32,256`` also tallies, per prompt, random ids of its length drawn as the speed
phase's default prompts are (``pipeline.measuring.speed.plan.prompt_ids``), into
``skip_fraction_random_ids``: how far the speed phase's random prompts skip what the eval's do
(``speed.prompts``).

Runs on the machine's python (torch, transformers 5.17), GPU when there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

FACTORS = (0.3, 1.0, 10.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5, 1e6)
KV_TILES = {"auto": 128, "fp8_e4m3": 256}  # plan.fmha_v2_kv_tile(128, kv) for head dim 128
MAX_ROWS = 2048  # query rows per layer and prompt (a spread of 64-row blocks, all their keys)

CAPTURED: list[tuple[Any, Any, Any]] = []


def capture_attention(module: Any, query: Any, key: Any, value: Any, *args: Any, **kw: Any) -> Any:
    """Record q, k, v of batch row 0 as ``[L, heads, D]``, then attend with SDPA."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    CAPTURED.append(tuple(t[0].transpose(0, 1).float() for t in (query, key, value)))
    return sdpa_attention_forward(module, query, key, value, *args, **kw)


def load(target: Path) -> tuple[Any, Any]:
    """Tokenizer and bf16 model whose attention records its inputs."""
    import torch
    from transformers import AttentionInterface, AutoModelForCausalLM, AutoTokenizer

    AttentionInterface.register("mtp_capture", capture_attention)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(
        target, dtype=torch.bfloat16, attn_implementation="mtp_capture"
    )
    # transformers' stub types PreTrainedModel.to's wrapper, not the call
    return AutoTokenizer.from_pretrained(target), model.to(device).eval()  # type: ignore[arg-type]


def parse_factors(text: str) -> tuple[float, ...]:
    """``1e4,3e4`` -> (10000.0, 30000.0): the grid, sorted, each factor above 0.

    Raises:
        argparse.ArgumentTypeError: a value that is not a number above 0.
    """
    try:
        found = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--factors {text!r}: numbers, comma-separated") from None
    if not found or found[0] <= 0:
        raise argparse.ArgumentTypeError(f"--factors {text!r}: each factor above 0 (0: exact)")
    return tuple(found)


def tally_prompt(
    model: Any, ids: list[int], factors: tuple[float, ...] = FACTORS
) -> dict[str, Any]:
    """Tiles and skipped tiles per KV tile size and factor, and the output error, for one prompt."""
    import torch

    CAPTURED.clear()
    with torch.no_grad():
        model(input_ids=torch.tensor([ids], device=model.device))
    return {"tokens": len(ids), "layers": len(CAPTURED),
            **tally_captured(CAPTURED, len(ids), factors)}  # fmt: skip


def tally_captured(
    captured: list[tuple[Any, Any, Any]], seqlen: int, factors: tuple[float, ...]
) -> dict[str, Any]:
    """``tally_prompt``'s counts on the first ``seqlen`` positions of recorded q, k, v.

    A causal model's q, k and v at a prompt's first ``seqlen`` positions are those of that
    prefix on its own, so one forward pass over a long prompt serves each shorter cut of it.
    """
    from backends.probe.inputs import AttentionInputs
    from backends.probe.reference import reference, sample_blocks

    out: dict[str, Any] = {}
    for kv, tile in KV_TILES.items():
        tiles, skipped, err = 0, dict.fromkeys(factors, 0), {f: 0.0 for f in factors}
        for q, k, v in captured:
            inputs = AttentionInputs(q=q[:seqlen], k=k[:seqlen], v=v[:seqlen], batch=1,
                                     seqlen=seqlen)  # fmt: skip
            ref = reference(inputs, sample_blocks(seqlen, MAX_ROWS), factors, kv_tile=tile)
            tiles += ref.tiles
            scale = float(ref.out.abs().mean())
            for f in factors:
                skipped[f] += ref.skipped.get(f, 0)
                moved = float((ref.emulated[f] - ref.out).abs().mean()) / scale
                err[f] = max(err[f], moved)
        out[kv] = {
            "tiles": tiles,
            "skipped": {str(f): n for f, n in skipped.items()},
            "max_rel_output_change": {str(f): round(e, 6) for f, e in err.items()},
        }
    return out


def pick(fractions: dict[float, float], moderate: float, aggressive: float) -> dict[str, Any]:
    """The moderate and aggressive factors of the grid, with the fractions they skip."""
    grid = sorted(fractions)

    def first_at(share: float) -> float | None:
        return next((f for f in grid if fractions[f] >= share), None)

    mod, agg = first_at(moderate), first_at(aggressive)
    note = ""
    if agg is None:
        agg, note = grid[-1], f"no factor up to {grid[-1]:g} skips {aggressive:.0%}"
    if mod is None or mod >= agg:
        mod = grid[max(0, grid.index(agg) - 2)]
        note = note or "moderate taken two grid steps below aggressive"
    return {
        "moderate": mod,
        "aggressive": agg,
        "moderate_skip": fractions[mod],
        "aggressive_skip": fractions[agg],
        "note": note,
    }


def parse_id_range(text: str) -> tuple[int, int]:
    """``32,256`` -> (32, 256): the random ids' ``[low, high)``.

    Raises:
        argparse.ArgumentTypeError: not two integers with low < high.
    """
    try:
        low, high = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--random-ids {text!r}: LOW,HIGH integers") from None
    if not 0 <= low < high:
        raise argparse.ArgumentTypeError(f"--random-ids {text!r}: 0 <= LOW < HIGH")
    return low, high


def fractions(rows: list[dict[str, Any]], factors: tuple[float, ...]) -> dict[str, Any]:
    """Skipped over all tiles of every row, per KV tile size and factor."""
    return {
        kv: {
            f: sum(r[kv]["skipped"][str(f)] for r in rows)
            / max(1, sum(r[kv]["tiles"] for r in rows))
            for f in factors
        }
        for kv in KV_TILES
    }


def random_rows(
    model: Any, rows: list[dict[str, Any]], span: tuple[int, int], factors: tuple[float, ...]
) -> list[dict[str, Any]]:
    """Each prompt's length again, in random ids as the speed phase draws them (seed 0)."""
    from pipeline.measuring.speed.plan import TokenRange, prompt_ids

    ids = TokenRange(*span, source="--random-ids")
    return [
        tally_prompt(model, prompt_ids(ids, 0, i, r["tokens"]), factors) for i, r in enumerate(rows)
    ]


def _random_block(
    model: Any, rows: list[dict[str, Any]], span: tuple[int, int] | None, factors: tuple[float, ...]
) -> dict[str, Any]:
    if span is None:
        return {}
    shares = fractions(random_rows(model, rows, span, factors), factors)
    return {
        "random_ids": list(span),
        "skip_fraction_random_ids": {
            kv: {str(f): round(x, 5) for f, x in t.items()} for kv, t in shares.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Tally every retrieval prompt, write the JSON (and the chosen factors as an env file)."""
    from benchmarks.live_h200 import model_eval as me
    from evals.base import make_eval
    from evals.eval_conf import DatasetConf, EvalConf

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--env", type=Path, help="write SKIP_MODERATE= / SKIP_AGGRESSIVE= here")
    parser.add_argument("--limit", type=int, default=None, help="first N prompts (a quick look)")
    parser.add_argument("--moderate", type=float, default=0.2)
    parser.add_argument("--aggressive", type=float, default=0.6)
    parser.add_argument("--factors", type=parse_factors, default=FACTORS, help="e.g. 1e4,3e4")
    parser.add_argument("--random-ids", type=parse_id_range, default=None, help="e.g. 32,256")
    args = parser.parse_args(argv)
    start = time.time()
    tok, model = load(args.target)
    conf = EvalConf(
        kind="gsm8k", dataset=DatasetConf(source="bundled", path="synth_retrieval.jsonl")
    )
    prompts = make_eval("synth_retrieval", conf).prompts()[: args.limit]
    rows = [
        tally_prompt(model, me.chat_ids(tok, [dict(m) for m in p.messages]), args.factors)
        for p in prompts
    ]
    totals = fractions(rows, args.factors)
    chosen = pick(totals["auto"], args.moderate, args.aggressive)
    found = {
        "factors": list(args.factors),
        "kv_tiles": KV_TILES,
        "max_rows_per_layer": MAX_ROWS,
        "skip_fraction": {
            kv: {str(f): round(x, 5) for f, x in t.items()} for kv, t in totals.items()
        },
        "chosen": chosen,
        **_random_block(model, rows, args.random_ids, args.factors),
        "prompts": rows,
        "seconds": round(time.time() - start, 1),
        "device": str(model.device),
    }
    args.out.write_text(json.dumps(found, indent=1) + "\n")
    if args.env:
        args.env.write_text(
            f"SKIP_MODERATE={chosen['moderate']:g}\nSKIP_AGGRESSIVE={chosen['aggressive']:g}\n"
        )
    print(
        "skip_fraction: bf16-tile fractions",
        json.dumps(found["skip_fraction"]["auto"]),
        "chosen",
        json.dumps(chosen),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
