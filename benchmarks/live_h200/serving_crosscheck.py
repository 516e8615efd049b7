"""SGLang's own ``bench_serving`` beside the serving phase's figures (issue 42 item 4).

    python -m benchmarks.live_h200.serving_crosscheck BENCH.jsonl SWEEP --bucket 8192 \
        --concurrency 16 [--variant fa3] [--out crosscheck.json]

``BENCH.jsonl``: what ``python -m sglang.bench_serving --output-file`` appended (its last line is
read; keys as SGLang 0.5.23 writes them, ``sglang/benchmark/serving.py``: ``output_throughput``,
``median_ttft_ms``, ``p90_ttft_ms``, ...). ``SWEEP``: a sweep folder whose cell of ``--variant``
ran the serving phase; its level at ``--bucket`` input tokens and ``--concurrency`` requests in
flight is set beside the bench, figure by figure, with the phase / bench ratio. Prints a markdown
table; ``--out`` also writes it as JSON. Two clients against two starts of one configuration do
not give equal figures: the ratio says how far the phase's client and SGLang's agree.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# (label, the phase point's figure, bench_serving's key); a figure is "key" or "key.pNN"
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("output tokens/s", "output_tokens_per_s", "output_throughput"),
    ("TTFT p50 (ms)", "ttft_ms.p50", "median_ttft_ms"),
    ("TTFT p90 (ms)", "ttft_ms.p90", "p90_ttft_ms"),
    ("TTFT p99 (ms)", "ttft_ms.p99", "p99_ttft_ms"),
    ("ITL p50 (ms)", "itl_ms.p50", "median_itl_ms"),
    ("ITL p90 (ms)", "itl_ms.p90", "p90_itl_ms"),
    ("ITL p99 (ms)", "itl_ms.p99", "p99_itl_ms"),
    ("TPOT p50 (ms)", "tpot_ms.p50", "median_tpot_ms"),
    ("TPOT p90 (ms)", "tpot_ms.p90", "p90_tpot_ms"),
    ("e2e p50 (ms)", "e2e_ms.p50", "median_e2e_latency_ms"),
    ("e2e p90 (ms)", "e2e_ms.p90", "p90_e2e_latency_ms"),
    ("requests", "requests", "completed"),
)


class CrosscheckError(ValueError):
    """An input the cross-check cannot read; the message names the file and the key."""


@dataclass(frozen=True)
class Row:
    """One figure, as the phase and as bench_serving measured it."""

    figure: str
    phase: float | None
    bench: float | None
    ratio: float | None  # phase / bench


def bench_line(path: Path) -> dict[str, Any]:
    """The last JSON line bench_serving appended to ``path``."""
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()] if path.is_file() else []
    if not lines:
        raise CrosscheckError(f"{path}: no bench_serving line (did the bench run to its end?)")
    line = json.loads(lines[-1])
    if not isinstance(line, dict) or "output_throughput" not in line:
        raise CrosscheckError(f"{path}: its last line has no 'output_throughput'")
    return line


def variant_result(sweep: Path, variant: str) -> tuple[Path, dict[str, Any]]:
    """The result.json of the sweep's cell of ``variant`` (its ``cell.variant``)."""
    for path in sorted(sweep.glob("*/result.json")):
        result = json.loads(path.read_text())
        if result.get("cell", {}).get("variant") == variant:
            return path, result
    raise CrosscheckError(f"{sweep}: no cell of variant {variant!r} with a result.json")


def serving_point(result: Mapping[str, Any], bucket: int, concurrency: int) -> dict[str, Any]:
    """The serving phase's level at ``bucket`` input tokens and ``concurrency``."""
    points = (result.get("serving") or {}).get("points") or []
    for point in points:
        if point.get("bucket") == bucket and point.get("concurrency") == concurrency:
            return dict(point)
    have = sorted((p.get("bucket"), p.get("concurrency")) for p in points)
    raise CrosscheckError(
        f"no serving level at bucket {bucket}, concurrency {concurrency}; the cell has {have}"
    )


def _figure(point: Mapping[str, Any], key: str) -> float | None:
    name, _, pct = key.partition(".")
    value = point.get(name)
    if pct:
        value = value.get(pct) if isinstance(value, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def rows(point: Mapping[str, Any], bench: Mapping[str, Any]) -> list[Row]:
    """Every figure of FIGURES, the phase's beside the bench's, with their ratio."""
    out = []
    for label, phase_key, bench_key in FIGURES:
        ours, theirs = _figure(point, phase_key), _figure(bench, bench_key)
        ratio = ours / theirs if ours is not None and theirs else None
        out.append(Row(label, ours, theirs, ratio))
    return out


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def markdown(table: Sequence[Row], title: str) -> str:
    """The side-by-side table."""
    lines = [title, "", "| figure | phase | bench_serving | phase / bench |", "|---|---|---|---|"]
    lines += [f"| {r.figure} | {_cell(r.phase)} | {_cell(r.bench)} | {_cell(r.ratio, 3)} |"
              for r in table]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Read both, print the table, write ``--out``; exit 2 with the reason on bad input."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", type=Path)
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--bucket", type=int, required=True)
    ap.add_argument("--concurrency", type=int, required=True)
    ap.add_argument("--variant", default="fa3")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    try:
        bench = bench_line(args.bench)
        cell, result = variant_result(args.sweep, args.variant)
        table = rows(serving_point(result, args.bucket, args.concurrency), bench)
    except (CrosscheckError, OSError, json.JSONDecodeError) as exc:
        print(f"serving_crosscheck: {exc}", file=sys.stderr)
        return 2
    title = (f"bench_serving ({args.bench.name}) beside {cell.parent.name}'s serving level at "
             f"{args.bucket} input tokens, concurrency {args.concurrency}")  # fmt: skip
    sys.stdout.write(markdown(table, title))
    if args.out:
        body = {"bench": str(args.bench), "cell": str(cell.parent), "bucket": args.bucket,
                "concurrency": args.concurrency, "rows": [asdict(r) for r in table]}  # fmt: skip
        args.out.write_text(json.dumps(body, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
