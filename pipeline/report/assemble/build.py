"""Assemble a report: load the cells, run every check, correct across cells, pick the verdict."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.report.assemble.gate import gate_exit_code, not_judged
from pipeline.report.judge.baseline_warnings import baseline_warnings
from pipeline.report.judge.cell_checks import cell_checks
from pipeline.report.judge.check_kinds import SPEED_VS_BASELINE
from pipeline.report.judge.decode_parity import decode_checks
from pipeline.report.judge.lossless import lossless_checks
from pipeline.report.judge.pairing import Samples
from pipeline.report.judge.parity_checks import parity_checks
from pipeline.report.judge.verdicts import Check, finalize, overall, verdict_note, worst
from pipeline.report.load.cells import CellRecord, load_cells
from pipeline.report.load.samples import SampleError, read_samples
from pipeline.report.load.tolerance import Tolerance
from pipeline.report.speed.band_checks import speed_checks
from pipeline.report.speed.ratios import SpeedRow, speed_rows
from pipeline.report.speed.restart_noise import RestartNoise, restart_noise, same_engine
from pipeline.report.speed.serving import serving_checks, serving_rows
from pipeline.report.speed.skip_fractions import FrontierInputs


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
    # Cells read from --baseline-dir outside the DIRs under test: baselines only, never judged.
    baselines: list[CellRecord] = field(default_factory=list)
    baseline_dirs: list[str] = field(default_factory=list)  # --baseline-dir, as given
    aa_controls: list[str] = field(default_factory=list)  # A/A second starts: no band judges them

    @property
    def exit_code(self) -> int:
        """0 all GO / PASS, 1 any NO-GO / FAIL, 2 undecided, failed, missing or nothing judged."""
        return gate_exit_code(self.checks)

    @property
    def not_judged(self) -> list[str]:
        """What the report measured and did not judge (``gate.not_judged``)."""
        return not_judged(self.cells, self.checks, self.speed, self.tolerance.baseline,
                          self.aa_controls)  # fmt: skip

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

    def accuracy_verdict(self, cell: CellRecord) -> str:
        """The most severe verdict among the cell's checks other than speed."""
        return worst(c.verdict for c in self.checks_of(cell) if c.kind != SPEED_VS_BASELINE)

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


def _once(cells: list[CellRecord]) -> list[CellRecord]:
    # A DIR inside a --baseline-dir is read twice: each folder counts once.
    seen: set[Path] = set()
    out = []
    for cell in cells:
        key = (cell.folder or Path(cell.sweep) / Path(cell.id).name).resolve()
        if key not in seen:
            seen.add(key)
            out.append(cell)
    return out


def under_test(cell: CellRecord, paths: Sequence[Path], baseline_dirs: Sequence[Path]) -> bool:
    """Whether ``cell`` is judged: read from a DIR, and not from a ``--baseline-dir`` inside it.

    A baseline folder that is itself a DIR (or holds one) leaves that DIR's cells under test.
    """
    where = cell.folder or Path(cell.sweep)  # a MISSING cell: its sweep
    for path in paths:
        inside = [b for b in baseline_dirs if b.resolve() != path.resolve() and _under(b, [path])]
        if _under(where, [path]) and not _under(where, inside):
            return True
    return False


def build_report(
    paths: Sequence[Path], tol: Tolerance, baseline_dirs: Sequence[Path] = ()
) -> Report:
    """Load, check and judge every cell under ``paths``.

    Args:
        paths: multirun folders, cell folders or folders above them.
        tol: the policy.
        baseline_dirs: where baselines come from (``--baseline-dir``); empty: any input, the
            candidate's own sweep first. Their cells outside the DIRs under test (or in a
            folder of one named apart) are baselines only: never judged, listed as such.
    """
    extra = [d for d in baseline_dirs if not any(_under(d, [p]) for p in paths)]
    loaded, warnings, ignored = load_cells([*paths, *extra])
    loaded = _once(loaded)
    pool = [c for c in loaded if _under(c.folder, baseline_dirs)] if baseline_dirs else loaded
    cells = [c for c in loaded if under_test(c, paths, baseline_dirs)]
    baselines = [c for c in loaded if not under_test(c, paths, baseline_dirs)]
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
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    restart = restart_noise(loaded)
    speed = [
        replace(row, aa_band=restart.band(row.cell, row.point.key),
                aa_pair=same_engine(row.cell, row.baseline))
        for row in speed_rows(cells, pool, tol.baseline, tol.match)
    ]  # fmt: skip
    checks += speed_checks(speed, tol.speed, tol.baseline)
    serving = serving_rows(cells, tol.baseline, tol.match)
    checks += serving_checks(serving, tol.serving, tol.baseline)
    controls = sorted({r.cell.label for r in speed if r.aa_pair}
                      | {r.cell.label for r in serving if r.aa_pair})  # fmt: skip
    checks += parity_checks(cells, pool, tol) + decode_checks(cells, pool, tol)
    checks += lossless_checks(cells, pool)
    for check in checks:
        check.message = check.kind.describe(check)
    inputs = [str(p) for p in paths]
    return Report(cells, checks, tol, inputs, warnings, stamp, ignored, speed, restart=restart,
                  baselines=baselines, baseline_dirs=[str(d) for d in baseline_dirs],
                  aa_controls=controls)  # fmt: skip
