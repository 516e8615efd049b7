"""The README's rows of the pipeline's own speed cells: each candidate's ratio to fa3 per shape.

    python3 pipeline_speed_rows.py REPORT/summary.json

Reads the report's ``speed`` list (``mtp-eval-report`` over the live speed sweeps) and prints one
Markdown row per candidate, KV dtype and KV pool: baseline median time / candidate median time
(above 1: the candidate is faster), ``-`` where that cell did not run the shape. The report has
each ratio's 95% interval; the README quotes the ratios.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# (phase, batch, prompt tokens) -> column title, in the README's order
SHAPES = {
    ("prefill", 1, 1024): "1k",
    ("prefill", 1, 4096): "4k",
    ("prefill", 1, 16384): "16k",
    ("prefill", 1, 65536): "64k",
    ("prefill", 1, 131072): "128k",
    ("prefill", 8, 1024): "8 x 1k",
    ("decode", 1, 512): "decode 1",
    ("decode", 8, 512): "decode 8",
    ("decode", 32, 512): "decode 32",
}
KV_NAMES = {"auto": "bf16", "fp8_e4m3": "fp8_e4m3"}


def header() -> list[str]:
    """The table's two header lines."""
    titles = ["KV", "variant", "KV pool (tokens)", *SHAPES.values()]
    return ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]


def speed_rows(speed: Sequence[Mapping[str, Any]]) -> list[str]:
    """One row per (KV dtype, candidate, pool) of the entries that have a ratio."""
    groups: dict[tuple[str, str, int], dict[tuple[str, int, int], float]] = {}
    for e in speed:
        if e.get("ratio") is None:
            continue
        key = (str(e["kv_dtype"]), str(e["variant"]), int(e.get("kv_pool_tokens") or 0))
        groups.setdefault(key, {})[(e["phase"], e["batch"], e["tokens"])] = float(e["ratio"])
    rows = []
    for (kv, variant, pool), ratios in sorted(groups.items()):
        cells = [f"{ratios[s]:.2f}" if s in ratios else "-" for s in SHAPES]
        name = "fa3 again (A/A)" if variant == "fa3_repeat" else variant
        row = [KV_NAMES.get(kv, kv), name, f"{pool:,}" if pool else "?", *cells]
        rows.append("| " + " | ".join(row) + " |")
    return rows


def main(argv: list[str]) -> int:
    """Print the table of the summary.json named in ``argv``."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    speed = json.loads(Path(argv[0]).read_text(encoding="utf-8")).get("speed") or []
    print("\n".join([*header(), *speed_rows(speed)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
