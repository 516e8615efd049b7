"""The probe's Markdown report from its JSON records (pure Python; ``plots`` draws the figures).

``python -m backends.probe.report probe.json [OUT_DIR]`` rebuilds the report and plots from a
results file, e.g. after a run that was killed before it wrote them.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from backends.probe.claims import claims_table, regime_rows

Key = tuple[str, str, int, int]  # kv dtype, profile, batch, tokens per sequence


def ok_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that measured something."""
    return [r for r in records if r.get("status") == "ok"]


def by_point(records: list[dict[str, Any]]) -> dict[Key, dict[tuple[str, float], dict[str, Any]]]:
    """Group ok records by point, then by (kernel, factor)."""
    points: dict[Key, dict[tuple[str, float], dict[str, Any]]] = defaultdict(dict)
    for rec in ok_records(records):
        key = (rec["kv_dtype"], rec["profile"], rec["batch"], rec["seqlen"])
        points[key][(rec["kernel"], float(rec["factor"]))] = rec
    return dict(points)


def fmt(value: object, spec: str = ".3g") -> str:
    """A number for a table cell ("-" when missing)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def kernel_table(points: dict[Key, dict[tuple[str, float], dict[str, Any]]]) -> list[str]:
    """Factor 0: each kernel's time and error against fp32, and the two kernels' difference."""
    rows = []
    for key in sorted(points, key=lambda k: (k[0], k[1], k[2] * k[3], k[2])):
        v2, fa3 = points[key].get(("fmha_v2", 0.0)), points[key].get(("fa3", 0.0))
        if v2 is None and fa3 is None:
            continue
        ratio = fa3["median_ms"] / v2["median_ms"] if v2 and fa3 else None
        either = v2 or fa3 or {}
        rows.append(
            [
                key[0],
                key[1],
                f"{key[2]}x{key[3]}",
                fmt(v2 and v2["median_ms"], ".4g"),
                fmt(fa3 and fa3["median_ms"], ".4g"),
                fmt(ratio, ".3f"),
                fmt(v2 and v2["max_abs"]),
                fmt(fa3 and fa3["max_abs"]),
                fmt(v2 and v2["rel_fro"]),
                fmt(fa3 and fa3["rel_fro"]),
                fmt(either.get("max_abs_vs_other_kernel")),
                fmt(either.get("fp8_inputs_max_abs")),
            ]
        )
    header = [
        "KV",
        "inputs",
        "BxL",
        "fmha_v2 ms",
        "fa3 ms",
        "fa3/fmha_v2",
        "fmha_v2 max err",
        "fa3 max err",
        "fmha_v2 rel err",
        "fa3 rel err",
        "fmha_v2 vs fa3",
        "fp8 inputs err",
    ]
    return _table(header, rows)


def skip_table(points: dict[Key, dict[tuple[str, float], dict[str, Any]]]) -> list[str]:
    """fmha_v2 per skip-softmax factor: skipped tiles, speed and error."""
    rows = []
    for key in sorted(points):
        base = points[key].get(("fmha_v2", 0.0))
        for (kernel, factor), rec in sorted(points[key].items()):
            if kernel != "fmha_v2" or factor == 0:
                continue
            speedup = base["median_ms"] / rec["median_ms"] - 1 if base else None
            rows.append(
                [
                    key[0],
                    key[1],
                    f"{key[2]}x{key[3]}",
                    fmt(factor, "g"),
                    fmt(rec.get("skip_est"), ".3f"),
                    fmt(rec["median_ms"], ".4g"),
                    fmt(speedup, "+.1%"),
                    fmt(rec["max_abs"]),
                    fmt(rec.get("max_abs_vs_factor0")),
                    fmt(rec.get("max_abs_vs_skip_ref")),
                    fmt(rec["rows_beyond_frac"], ".2e"),
                ]
            )
    header = [
        "KV",
        "inputs",
        "BxL",
        "factor",
        "est. skipped tiles",
        "ms",
        "speed-up vs 0",
        "max err vs fp32",
        "max diff vs factor 0",
        "max diff vs skip-aware ref",
        "rows beyond tol",
    ]
    return _table(header, rows)


def failing_table(records: list[dict[str, Any]]) -> list[str]:
    """Where the wrong rows are, for every run that had any (``metrics.failing_rows``)."""
    rows = [
        [
            rec["kernel"], rec["kv_dtype"], rec.get("profile", ""),
            f"{rec['batch']}x{rec['seqlen']}", fmt(rec.get("factor"), "g"),
            str(rec["failing"]["count"]), str(rec["failing"]["rows"]),
            str(rec["failing"]["max_position"]),
            " ".join(str(p) for p in rec["failing"]["first_positions"][:12]),
            " ".join(str(n) for n in rec["failing"]["per_128_rows"][:8]),
        ]
        for rec in ok_records(records)
        if rec.get("failing")
    ]  # fmt: skip
    header = [
        *("kernel", "KV", "profile", "size", "factor", "wrong vectors", "wrong rows"),
        *("last wrong position", "first wrong positions", "wrong per 128 positions"),
    ]
    return _table(header, rows) if rows else []


def failures(records: list[dict[str, Any]]) -> list[str]:
    """One line per record that errored or was skipped, grouped by message."""
    seen: dict[str, int] = defaultdict(int)
    for rec in records:
        if rec.get("status") != "ok":
            seen[f"{rec.get('status')}: {str(rec.get('error'))[:300]}"] += 1
    return [f"- {count} x {msg}" for msg, count in seen.items()]


def render(doc: dict[str, Any]) -> str:
    """The whole Markdown report."""
    records = doc.get("records", [])
    points = by_point(records)
    limit = doc.get("config", {}).get("tolerance", {}).get("max_row_fraction", 1e-3)
    out = [f"# Kernel parity probe: {doc.get('environment', {}).get('gpu', 'GPU')}", ""]
    out += [*_header(doc), "", "## Published claims beside this run", ""]
    out += [*_table(*claims_table(points, limit)), "", "## fmha_v2 and FA3 at factor 0", ""]
    out += [*kernel_table(points), "", "## Skip-softmax (fmha_v2)", ""]
    out += [*skip_table(points), "", "## Where skip-softmax engages", ""]
    out += [*_table(*regime_rows(points, limit)), ""]
    wrong = failing_table(records)
    if wrong:
        out += ["## Where the wrong rows are (checked rows only)", "", *wrong, ""]
    problems = failures(records)
    if problems:
        out += ["## Not measured", "", *problems, ""]
    return "\n".join(out)


def _header(doc: dict[str, Any]) -> list[str]:
    env, conf = doc.get("environment", {}), doc.get("config", {})
    geo = conf.get("geometry", {})
    jit = ", ".join(
        f"{j['kernel']} {j['kv_dtype']} {j['state']} {j['seconds']} s" for j in doc.get("jit", [])
    )
    return [
        f"- GPU: {env.get('gpu')} (SM{env.get('sm')}); versions: {env.get('versions')}",
        f"- model {conf.get('model')} at tp {conf.get('tp')}: {geo.get('num_heads')} query / "
        f"{geo.get('num_kv_heads')} KV heads per GPU, head dim {geo.get('head_dim')}, "
        f"page {geo.get('page_size')}; variant {conf.get('backend')} -> {conf.get('variant')}",
        f"- grid {conf.get('grid')}, budget {conf.get('budget_s')} s, elapsed "
        f"{doc.get('elapsed_s')} s, status {doc.get('status')}; JIT: {jit or 'in process'}",
        "- times: median of CUDA-event timings per call (L2 flushed, host overhead excluded); "
        "errors: against fp32 attention of the exact values the kernels read",
        f"- input profiles (logit units): {conf.get('profiles')}",
    ]


def write_report(doc: dict[str, Any], out_dir: Path, plots: bool = True) -> list[Path]:
    """Write ``probe.md`` (and the plots) into ``out_dir``; return the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "probe.md"
    md.write_text(render(doc))
    written = [md]
    if plots:
        from backends.probe.plots import draw_all

        written += draw_all(by_point(doc.get("records", [])), out_dir)
    return written


def main(argv: list[str] | None = None) -> int:
    """Rebuild the report from a results file: ``probe.json [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m backends.probe.report probe.json [OUT_DIR]", file=sys.stderr)
        return 2
    path = Path(args[0])
    doc = json.loads(path.read_text())
    for written in write_report(doc, Path(args[1]) if len(args) > 1 else path.parent):
        print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
