"""Short human summaries of cells: one line per cell, and a table after a multirun."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from pipeline.results import RESULT_FILE, misconfigured, unverified_lines

MISCONFIGURED = "MISCONFIGURED"
_HEADER = ("cell", "status", "accuracy (95% CI)", "accept len", "accept rate", "unverified", "note")


def _accuracy(result: dict[str, Any]) -> str:
    parts = []
    for name, ev in result.get("evals", {}).items():
        if ev.get("accuracy") is None:  # ungraded evals (MT-Bench) measure accept rates only
            continue
        lo, hi = ev.get("ci95") or (None, None)
        ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
        parts.append(f"{name} {ev['accuracy']:.3f}{ci}")
    return "; ".join(parts) or "-"


def _fmt(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def row(result: dict[str, Any]) -> tuple[str, ...]:
    """The summary columns of one result."""
    accept = result.get("accept") or {}
    error = result.get("error") or {}
    note = error.get("message", "").splitlines()[0][:90] if error else ""
    status = result.get("status", "?")
    wrong = misconfigured(result) if status == "ok" else []
    if wrong:  # server.on_mismatch=warn: measured, but not what the cell asked for
        status, note = f"ok, {MISCONFIGURED}", "; ".join(wrong)
    status += " (simulated)" if result.get("simulated") else ""
    return (
        result.get("cell", {}).get("name", "?"),
        status,
        _accuracy(result),
        _fmt(accept.get("accept_length")),
        _fmt(accept.get("accept_rate")),
        "; ".join(unverified_lines(result)) or "-",
        note,
    )


def table(rows: list[tuple[str, ...]]) -> str:
    """A plain aligned text table with a header."""
    all_rows = [_HEADER, *rows]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(_HEADER))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in all_rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def collect(sweep_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every cell result under a sweep folder, in job order."""
    found = []
    for path in sorted(sweep_dir.glob(f"*/{RESULT_FILE}"), key=_job_order):
        found.append((path.parent, json.loads(path.read_text(encoding="utf-8"))))
    return found


def _job_order(path: Path) -> tuple[int, str]:
    head = path.parent.name.split("_", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, path.parent.name)


def cell_report(result: dict[str, Any], cell_dir: Path) -> str:
    """What a single run prints at its end."""
    lines = [table([row(result)])]
    lines += [f"warning: {w}" for w in result.get("warnings") or []]
    lines.append(f"results: {cell_dir / RESULT_FILE}")
    if result.get("status") == "planned":
        lines.append("server command: " + shlex.join(result["server"].get("argv", [])))
        env = result.get("provenance", {}).get("server_env", {})
        lines.append("server env: " + " ".join(f"{k}={v}" for k, v in env.items()))
    return "\n".join(lines)


class SweepSummaryCallback(Callback):
    """Prints where a multirun's results are and one line per cell (advisory, not a gate)."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra after the last job of a multirun."""
        sweep_dir = Path(config.hydra.sweep.dir)
        results = collect(sweep_dir)
        print(f"\n{len(results)} cells under {sweep_dir}")
        print(table([row(r) for _, r in results]))
