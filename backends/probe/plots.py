"""The probe's three figures: error and speed against the skip-softmax factor, speed ratio vs size.

matplotlib is imported inside ``draw_all`` (Agg backend, no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

Points = dict[tuple[str, str, int, int], dict[tuple[str, float], dict[str, Any]]]


def _skip_series(points: Points, field: str) -> dict[str, tuple[list[float], list[float]]]:
    """Per point label: fmha_v2 factors and ``field`` (or speed-up vs factor 0 for 'speedup')."""
    series = {}
    for (kv, profile, batch, seqlen), recs in sorted(points.items()):
        v2 = sorted((f, r) for (k, f), r in recs.items() if k == "fmha_v2")
        base = recs.get(("fmha_v2", 0.0))
        if len(v2) < 2 or base is None:
            continue
        xs, ys = [], []
        for factor, rec in v2:
            value = base["median_ms"] / rec["median_ms"] if field == "speedup" else rec.get(field)
            if value is not None:
                xs.append(factor)
                ys.append(value)
        series[f"{kv} {profile} {batch}x{seqlen}"] = (xs, ys)
    return series


def _ratio_series(points: Points) -> dict[str, tuple[list[float], list[float]]]:
    series: dict[str, tuple[list[float], list[float]]] = {}
    for (kv, _profile, batch, seqlen), recs in sorted(
        points.items(), key=lambda p: p[0][2] * p[0][3]
    ):
        v2, fa3 = recs.get(("fmha_v2", 0.0)), recs.get(("fa3", 0.0))
        if v2 and fa3:
            xs, ys = series.setdefault(kv, ([], []))
            xs.append(batch * seqlen)
            ys.append(fa3["median_ms"] / v2["median_ms"])
    return series


Series = dict[str, tuple[list[float], list[float]]]


def _figure(
    series: Series, title: str, xlabel: str, ylabel: str, path: Path, *, logy: bool, xscale: str
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if xscale == "symlog":
        ax.set_xscale("symlog", linthresh=0.1)
    else:
        ax.set_xscale(xscale)
    if logy:
        ax.set_yscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if series:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_all(points: Points, out_dir: Path) -> list[Path]:
    """Write ``error_vs_factor.png``, ``speed_vs_factor.png`` and ``ratio_vs_size.png``."""
    return [
        _figure(
            _skip_series(points, "max_abs"),
            "fmha_v2: max |error| vs fp32",
            "skip-softmax factor (0 = off)",
            "max abs error",
            out_dir / "error_vs_factor.png",
            logy=True,
            xscale="symlog",
        ),
        _figure(
            _skip_series(points, "speedup"),
            "fmha_v2: speed vs factor 0 (higher is faster)",
            "skip-softmax factor (0 = off)",
            "time(factor 0) / time(factor)",
            out_dir / "speed_vs_factor.png",
            logy=False,
            xscale="symlog",
        ),
        _figure(
            _ratio_series(points),
            "FA3 time / fmha_v2 time at factor 0 (>1: fmha_v2 faster)",
            "query tokens in the batch",
            "fa3 ms / fmha_v2 ms",
            out_dir / "ratio_vs_size.png",
            logy=False,
            xscale="log",
        ),
    ]
