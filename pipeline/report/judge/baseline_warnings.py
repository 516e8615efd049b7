"""Report warnings about baselines: from another sweep, or not the one a stopped cell's looks used.

They go into ``warnings`` (summary.json, report.md, the HTML banner and the console), not only
into a table cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.report.judge.pairing import choose_for
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import Tolerance


def _tail(folder: str | Path) -> tuple[str, ...]:
    # Sweep and cell folder names: a sweep copied or moved elsewhere still compares equal.
    return Path(folder).parts[-2:]


def _names(cells: Sequence[CellRecord]) -> str:
    shown = ", ".join(c.name for c in cells[:3])
    return shown + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")


def looks_baselines(cell: CellRecord) -> dict[str, str]:
    """Eval -> the baseline folder its sequential looks paired with (stopped candidates only)."""
    out = {}
    for name, summary in cell.evals.items():
        try:
            seq = summary.checked_sequential()
        except ValueError:  # the cell's own checks say what is malformed
            continue
        if seq is not None and seq.role == "candidate" and seq.baseline_dir:
            out[name] = seq.baseline_dir
    return out


def stopped_against_another(cell: CellRecord, base: CellRecord) -> list[str]:
    """One line per eval that stopped early against another baseline than ``base``."""
    return [
        f"{cell.label}: eval {name} stopped early against baseline {used} but is judged "
        f"against {base.folder}; name the baseline the looks used with --baseline-dir"
        for name, used in looks_baselines(cell).items()
        if _tail(used) != _tail(str(base.folder))
    ]


def baseline_warnings(
    cells: Sequence[CellRecord], pool: Sequence[CellRecord], tol: Tolerance, named: bool
) -> list[str]:
    """Warnings on the baselines of ``cells`` chosen among ``pool``.

    Args:
        cells: the report's cells; only ok candidates have a baseline to warn about.
        pool: the cells baselines are chosen among (all, or those of ``--baseline-dir``).
        tol: the policy (baseline variant, match list).
        named: the user named the baseline folder (``--baseline-dir``): one from another sweep
            is then what was asked for, and not warned about. So is one a cell's sequential
            looks ran against (``sequential.baseline_dir`` named it when the cell ran).
    """
    elsewhere: dict[tuple[str, str], list[CellRecord]] = {}
    out: list[str] = []
    for cell in cells:
        if cell.status != "ok" or cell.variant == tol.baseline:
            continue
        base, choice = choose_for(cell, pool, tol.baseline, tol.match)
        if base is None:
            continue
        used = looks_baselines(cell).values()
        ran_against = bool(used) and all(_tail(u) == _tail(str(base.folder)) for u in used)
        if choice.elsewhere and not named and not ran_against:
            elsewhere.setdefault((cell.sweep, str(base.folder)), []).append(cell)
        out += stopped_against_another(cell, base)
    return [
        f"baseline from another sweep: {len(group)} cell(s) of sweep {sweep} ({_names(group)}) "
        f"are paired with {folder}, as their sweep holds no ok {tol.baseline} cell that "
        "matches them; name the baseline folder with --baseline-dir to make it the choice"
        for (sweep, folder), group in elsewhere.items()
    ] + out
