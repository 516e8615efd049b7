"""Assemble a report: load the cells, run every check, correct across cells, pick the verdict."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.report.baseline_warnings import baseline_warnings
from pipeline.report.checks import cell_checks
from pipeline.report.load import CellRecord, load_cells
from pipeline.report.pairing import Samples
from pipeline.report.restart_noise import RestartNoise, restart_noise
from pipeline.report.samples import SampleError, read_samples
from pipeline.report.skip_fractions import FrontierInputs
from pipeline.report.speed_table import SpeedRow, speed_rows
from pipeline.report.tolerance import Tolerance
from pipeline.report.verdicts import Check, exit_code, finalize, overall, verdict_note, worst


@dataclass
class Report:
    """Everything the renderers need."""

    cells: list[CellRecord]
    checks: list[Check]
    tolerance: Tolerance
    inputs: list[str]
    warnings: list[str] = field(default_factory=list)
    generated_at: str = ""
    ignored: list[str] = field(default_factory=list)  # folders of another sweep, not judged
    speed: list[SpeedRow] = field(default_factory=list)  # each speed point against its baseline
    # What the skip-softmax frontier reads beside the cells (mtp-eval-report --skip-fractions)
    frontier_inputs: FrontierInputs = field(default_factory=FrontierInputs)
    restart: RestartNoise = field(default_factory=RestartNoise)  # the A/A bands of the speed rows

    @property
    def exit_code(self) -> int:
        """0 all GO / PASS, 1 any NO-GO / FAIL, 2 anything undecided, failed or missing."""
        return exit_code(self.checks)

    @property
    def verdict(self) -> str:
        """GO, NO-GO or UNDECIDED."""
        return overall(self.exit_code)

    @property
    def simulated(self) -> bool:
        """Whether any cell ran on the simulated server."""
        return any(c.simulated for c in self.cells)

    def checks_of(self, cell: CellRecord) -> list[Check]:
        """The checks of one cell."""
        return [c for c in self.checks if c.cell_id == cell.id]

    def cell_verdict(self, cell: CellRecord) -> str:
        """The most severe verdict among the cell's checks."""
        return worst(c.verdict for c in self.checks_of(cell))

    def cell_note(self, cell: CellRecord) -> str:
        """A note beside the cell's verdict (e.g. GO without a reference), or empty."""
        return verdict_note(self.checks_of(cell))


def _reader() -> Callable[[CellRecord, str], Samples]:
    cache: dict[tuple[str, str], Samples | SampleError] = {}

    def read(cell: CellRecord, name: str) -> Samples:
        key = (cell.id, name)
        if key not in cache:
            try:
                if cell.folder is None:
                    raise SampleError(f"{cell.label}: no folder")
                cache[key] = read_samples(cell.folder, name)
            except SampleError as err:
                cache[key] = err
        found = cache[key]
        if isinstance(found, SampleError):
            raise found
        return found

    return read


def _under(folder: Path | None, roots: Sequence[Path]) -> bool:
    if folder is None:
        return False
    mine = folder.resolve()
    return any(mine.is_relative_to(root.resolve()) for root in roots)


def build_report(
    paths: Sequence[Path], tol: Tolerance, baseline_dirs: Sequence[Path] = ()
) -> Report:
    """Load, check and judge every cell under ``paths``.

    Args:
        paths: multirun folders, cell folders or folders above them.
        tol: the policy.
        baseline_dirs: where baselines come from (``--baseline-dir``); empty: any input, the
            candidate's own sweep first. One not under ``paths`` is read as an input too.
    """
    extra = [d for d in baseline_dirs if not any(_under(d, [p]) for p in paths)]
    cells, warnings, ignored = load_cells([*paths, *extra])
    pool = [c for c in cells if _under(c.folder, baseline_dirs)] if baseline_dirs else cells
    warnings += baseline_warnings(cells, pool, tol, named=bool(baseline_dirs))
    warnings += [
        f"{cell.label}: {warning}"
        for cell in cells
        for name, ev in cell.evals.items()
        if (warning := ev.retry_warning(name))
    ]
    read = _reader()
    checks = [check for cell in cells for check in cell_checks(cell, pool, tol, read)]
    finalize(checks, tol.alpha, tol.power, tol.multiplicity)
    for check in checks:
        check.message = check.kind.describe(check)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    inputs = [str(p) for p in [*paths, *extra]]
    restart = restart_noise(cells)
    speed = [
        replace(row, aa_band=restart.band(row.cell, row.point.key))
        for row in speed_rows(cells, pool, tol.baseline, tol.match)
    ]
    return Report(cells, checks, tol, inputs, warnings, stamp, ignored, speed, restart=restart)
