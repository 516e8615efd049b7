"""Short human summaries of cells: one line per cell, and a table after a multirun."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from pipeline.cli.speed_summary import ratio_pointer, speed_column, speed_lines
from pipeline.results.cell_paths import RESULT_FILE, job_order, result_path
from pipeline.results.result_types import CellResult
from pipeline.results.resume import resumed_line
from pipeline.results.store import read_result

MISCONFIGURED = "MISCONFIGURED"
_HEADER = ("cell", "status", "accuracy (95% CI)", "accept len", "accept rate", "unverified", "note")
NOTE_WIDTH = 90  # the table's note column; the whole first line follows the table


def _accuracy(result: CellResult) -> str:
    parts = []
    for name, ev in result.evals.items():
        if ev.accuracy is None and ev.graded and ev.n_samples:
            parts.append(f"{name} no answers")  # every request errored: nothing to grade
            continue
        if ev.accuracy is None:  # ungraded evals (MT-Bench) measure accept rates only
            continue
        lo, hi = ev.ci95
        ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
        parts.append(f"{name} {ev.accuracy:.3f}{ci}")
    if not result.evals:  # a speed-only cell: what it measured instead of a bare dash
        return speed_column(result)
    return "; ".join(parts) or "-"


def _fmt(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def _note(result: CellResult) -> str:
    note = result.error.first_line() if result.error else ""
    gate = result.parity.gate if result.parity else None
    if gate is not None and gate.stopped:  # parity.gate: why the accuracy columns are empty
        note = f"parity NO-GO: accuracy not run ({gate.skipped_text()})"
    wrong = result.misconfigured() if result.status == "ok" else []
    return "; ".join(wrong) if wrong else note  # server.on_mismatch=warn: not what was asked


def row(result: CellResult, since: str | None = None) -> tuple[str, ...]:
    """The summary columns of one result (``since``: when this run started, to mark skips)."""
    note = _note(result)
    note = note if len(note) <= NOTE_WIDTH else note[: NOTE_WIDTH - 1] + "…"
    status = result.status
    if status == "ok" and result.misconfigured():
        status = f"ok, {MISCONFIGURED}"
    status += " (simulated)" if result.simulated else ""
    if result.skipped_since(since):
        status += ", skipped: already finished"
    return (
        result.cell.name,
        status,
        _accuracy(result),
        _fmt(result.accept.accept_length),
        _fmt(result.accept.accept_rate),
        "; ".join(result.unverified_lines()) or "-",
        note,
    )


def table(rows: list[tuple[str, ...]]) -> str:
    """A plain aligned text table with a header."""
    # Kept over tabulate/rich: ljust is all it needs, and the base install stays one dep lighter.
    all_rows = [_HEADER, *rows]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(_HEADER))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in all_rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def collect(sweep_dir: Path) -> list[tuple[Path, CellResult]]:
    """Every cell result under a sweep folder, in job order."""
    found = []
    for path in sorted(sweep_dir.glob(f"*/{RESULT_FILE}"), key=lambda p: job_order(p.parent)):
        result = read_result(path.parent)
        if result is not None:
            found.append((path.parent, result))
    return found


def full_notes(results: list[CellResult]) -> list[str]:
    """Every note the table had to cut, whole: an error's first line usually ends with the fix."""
    return [f"{r.cell.name}: {_note(r)}" for r in results if len(_note(r)) > NOTE_WIDTH]


def skip_lines(results: list[CellResult], since: str | None) -> list[str]:
    """One line per cell that this run skipped because an earlier run finished it."""
    return [
        f"{r.cell.name}: skipped, already finished "
        f"(result of {r.started_at or '?'}; delete its result.json "
        "to measure it again)"
        for r in results
        if r.skipped_since(since)
    ]


def request_lines(result: CellResult) -> list[str]:
    """Per eval: the retries and errors its requests went through, and a warning above the rate."""
    lines = [line for n, ev in result.evals.items() if (line := ev.requests_line(n))]
    warned = [w for n, ev in result.evals.items() if (w := ev.retry_warning(n))]
    return lines + [f"warning: {w}" for w in warned]


def cell_report(result: CellResult, cell_dir: Path, since: str | None = None) -> str:
    """What a single run (or one job of a sweep) prints at its end."""
    lines = [*skip_lines([result], since), table([row(result, since)]), *full_notes([result])]
    lines += request_lines(result)
    lines += [
        resumed_line(name, ev.resumed_samples, ev.n_samples or ev.resumed_samples)
        for name, ev in result.evals.items()
        if ev.resumed_samples
    ]
    lines += speed_lines(result) + ratio_pointer([result], str(cell_dir))
    lines += [f"warning: {w}" for w in result.warnings]
    lines.append(f"results: {result_path(cell_dir)}")
    if result.status == "planned":
        lines.append("server command: " + shlex.join(result.server_argv))
        env = result.provenance.server_env
        lines.append("server env: " + " ".join(f"{k}={v}" for k, v in env.items()))
    return "\n".join(lines)


class SweepSummaryCallback(Callback):
    """Prints where a multirun's results are and one line per cell (advisory, not a gate)."""

    def __init__(self) -> None:
        self.started_at: str | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra before the first job: remember when, to mark skipped cells."""
        from pipeline.cell.provenance import now_iso

        self.started_at = now_iso()

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra after the last job of a multirun."""
        sweep_dir = Path(config.hydra.sweep.dir)
        found, ignored = own_cells(sweep_dir, collect(sweep_dir))
        results = [r for _, r in found]
        print(f"\n{len(results)} cells under {sweep_dir}")
        print(table([row(r, self.started_at) for r in results]))
        for line in full_notes(results):
            print(line)
        for result in results:
            for line in request_lines(result) + speed_lines(result):
                print(f"{result.cell.name}: {line}")
        for line in ratio_pointer(results, str(sweep_dir)):
            print(line)
        for folder in ignored:
            print(f"ignored: {folder} is not a job of this sweep (an earlier sweep's cell)")


def own_cells(
    sweep_dir: Path, found: list[tuple[Path, CellResult]]
) -> tuple[list[tuple[Path, CellResult]], list[Path]]:
    """The results of the sweep's own jobs (its ``multirun.yaml``), and the folders left out."""
    from pipeline.report.load.cells import sweep_folders

    own = sweep_folders(sweep_dir)
    if own is None:  # the jobs cannot be worked out: show everything
        return found, []
    return [f for f in found if f[0] in own], [f[0] for f in found if f[0] not in own]
