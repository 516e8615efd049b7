"""The speed table of ``speed_prefill.sh``: median prefill time per block and size, ratio to fa3.

    python3 speed_table.py OUTDIR/speed.jsonl [--baseline fa3] [--json speed.json]

Each record is one of ``sglang.benchmark.one_batch``'s (``run_name`` = the block, e.g.
``trtllm_mha-fp8_e4m3`` or ``fa3-auto-b8``; ``batch_size``, ``input_len``, ``prefill_latency`` in
seconds). A block's name is ``BACKEND-KV[-SUFFIX]``; its baseline is the block of the same KV dtype
and suffix with the baseline backend. The ratio is baseline time / variant time (above 1: the
variant is faster), with a 95% bootstrap interval over the repeats of both sides (resampled
independently: the blocks ran one after the other, not paired). ``fa3-auto-again``, fa3 measured
once more at the end, is reported against ``fa3-auto`` like any variant: that is the A/A, the ratio
two runs of one thing differ by.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

BOOTSTRAP = 4000


@dataclass(frozen=True)
class SpeedRow:
    """One block at one size: its median, spread and ratio to the baseline block."""

    block: str
    backend: str
    kv_dtype: str
    batch: int
    tokens: int
    repeats: int
    median_ms: float
    spread_ms: tuple[float, float]  # min, max of the repeats
    baseline: str | None
    ratio: float | None  # baseline median / this median
    ratio_ci: tuple[float, float] | None


def split_block(name: str) -> tuple[str, str, str]:
    """``trtllm_mha-fp8_e4m3-b8`` -> (backend, kv dtype, suffix); the suffix may be empty."""
    backend, kv, *rest = name.split("-")
    return backend, kv, "-".join(rest)


def ratio_interval(base: list[float], var: list[float], seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of median(base) / median(var), each side resampled."""
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(np.asarray(base), size=(BOOTSTRAP, len(base))), axis=1)
    v = np.median(rng.choice(np.asarray(var), size=(BOOTSTRAP, len(var))), axis=1)
    low, high = np.percentile(b / v, [2.5, 97.5])
    return float(low), float(high)


def baseline_of(block: str, blocks: set[str], baseline_backend: str) -> str | None:
    """The block this one is compared with: same KV dtype and suffix, the baseline backend."""
    backend, kv, suffix = split_block(block)
    if suffix == "again":  # the A/A block: against the first run of the same thing
        suffix = ""
    elif backend == baseline_backend:
        return None
    name = "-".join(p for p in (baseline_backend, kv, suffix) if p)
    return name if name in blocks and name != block else None


def speed_rows(records: list[dict], baseline_backend: str = "fa3") -> list[SpeedRow]:
    """Group one_batch records by block and size; median, spread and ratio for each."""
    times: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for rec in records:
        key = (rec["run_name"], int(rec["batch_size"]), int(rec["input_len"]))
        times[key].append(float(rec["prefill_latency"]) * 1000.0)
    blocks = {block for block, _, _ in times}
    rows = []
    for (block, batch, tokens), ms in sorted(times.items()):
        backend, kv, _ = split_block(block)
        base = baseline_of(block, blocks, baseline_backend)
        base_ms = times.get((base, batch, tokens)) if base else None
        ratio = statistics.median(base_ms) / statistics.median(ms) if base_ms else None
        ci = ratio_interval(base_ms, ms) if base_ms and len(base_ms) > 1 and len(ms) > 1 else None
        rows.append(SpeedRow(block, backend, kv, batch, tokens, len(ms), statistics.median(ms),
                             (min(ms), max(ms)), base if base_ms else None, ratio, ci))  # fmt: skip
    return rows


def markdown(rows: list[SpeedRow]) -> str:
    """The table: one line per block and size."""
    lines = ["| block | batch x tokens | repeats | median ms | min-max ms | vs | ratio [95%] |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.3f}"
        if r.ratio_ci:
            ratio += f" [{r.ratio_ci[0]:.3f}, {r.ratio_ci[1]:.3f}]"
        spread = f"{r.spread_ms[0]:,.1f}-{r.spread_ms[1]:,.1f}"
        lines.append(f"| {r.block} | {r.batch} x {r.tokens:,} | {r.repeats} | {r.median_ms:,.1f} | "
                     f"{spread} | {r.baseline or '-'} | {ratio} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def grid(rows: list[SpeedRow], release: str) -> str:
    """One line per KV dtype: the ratio of each batch-1 size, for the README's per-release table."""
    lines = []
    for kv in sorted({r.kv_dtype for r in rows if r.ratio is not None and r.baseline}):
        cells = [r for r in rows if r.kv_dtype == kv and r.batch == 1 and r.ratio is not None
                 and r.baseline == f"fa3-{kv}" and not r.block.endswith("again")]  # fmt: skip
        name = "bf16" if kv == "auto" else kv
        lines.append(
            f"| {name} | {release} | " + " | ".join(f"{r.ratio:.2f}" for r in cells) + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Print the table of a speed.jsonl; ``--json`` also writes the rows."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--baseline", default="fa3")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--grid", metavar="RELEASE", help="print only the ratio grid rows")
    args = parser.parse_args(argv)
    records = [json.loads(line) for line in args.records.read_text().splitlines() if line.strip()]
    rows = speed_rows(records, args.baseline)
    sys.stdout.write(grid(rows, args.grid) if args.grid else markdown(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
