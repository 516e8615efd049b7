"""Cell folders -> ``CellRecord``s, with MISSING cells for jobs of a multirun that left no result.

Accepted inputs: a multirun folder (``multirun.yaml`` at its top), a single cell folder
(``result.json`` or ``.hydra/``), or any folder above them (searched for both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.report.load.cell_record import CellRecord
from pipeline.report.load.expected import ExpectedJob, expected_jobs, identity_of_config, read_yaml
from pipeline.results.baseline_choice import UNKNOWN
from pipeline.results.cell_paths import RESULT_FILE as RESULT
from pipeline.results.cell_paths import result_path
from pipeline.results.result_types import STATUSES, CellIdentity, CellResult
from pipeline.results.store import read_result

MULTIRUN = "multirun.yaml"
# An ``ok`` result whose server ran another backend, KV dtype, speculative shape, model or kernels
# than the cell (``server.on_mismatch=warn``): never judged, never GO.
MISCONFIGURED = "misconfigured"

__all__ = [
    "MISCONFIGURED", "MULTIRUN", "CellRecord", "cell_from_folder", "load_cells", "sweep_folders",
]  # fmt: skip


def load_cells(paths: Sequence[Path]) -> tuple[list[CellRecord], list[str], list[str]]:
    """Every cell under ``paths`` plus the MISSING ones, warnings, and the folders ignored.

    A multirun folder holds the cells of its own ``multirun.yaml`` only: a folder left there by
    an earlier, different sweep is ignored (listed, never judged).

    Raises:
        ValueError: when a path does not exist or holds no cell folder.
    """
    cells: list[CellRecord] = []
    warnings: list[str] = []
    ignored: list[str] = []
    for path in paths:
        if not path.is_dir():
            raise ValueError(f"{path}: not a folder (give a multirun folder or cell folders)")
        roots = _roots(path)
        if not roots:
            raise ValueError(
                f"{path}: no {MULTIRUN} and no cell folder ({RESULT} or .hydra/) found under it"
            )
        for root in roots:
            if (root / MULTIRUN).is_file():
                found, warn, stale = _multirun(root)
                cells += _in_sweep(found, root)
                warnings += warn
                ignored += [
                    f"{folder}: not a job of {root / MULTIRUN} (an earlier sweep's cell)"
                    for folder in stale
                ]
            else:
                cells += _in_sweep([cell_from_folder(root, str(root))], root.parent)
    _show_sweeps(cells)
    return cells, warnings, ignored


def _in_sweep(cells: list[CellRecord], sweep: Path) -> list[CellRecord]:
    for cell in cells:
        cell.sweep = str(sweep)
    return cells


def _show_sweeps(cells: list[CellRecord]) -> None:
    # Several sweeps in one report: each label names its sweep (its folder's name, or the whole
    # path where two sweeps share a name), so no cell is mistaken for another sweep's.
    sweeps = sorted({c.sweep for c in cells})
    if len(sweeps) < 2:
        return
    names = Counter(Path(s).name for s in sweeps)
    for cell in cells:
        name = Path(cell.sweep).name
        cell.shown_sweep = name if names[name] == 1 else cell.sweep


def _roots(path: Path) -> list[Path]:
    if (path / MULTIRUN).is_file() or _is_cell(path):
        return [path]
    out: list[Path] = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        out += _roots(child)
    return out


def _is_cell(folder: Path) -> bool:
    return (folder / RESULT).is_file() or (folder / ".hydra" / "overrides.yaml").is_file()


def _multirun(root: Path) -> tuple[list[CellRecord], list[str], list[Path]]:
    jobs, warning = expected_jobs(root / MULTIRUN)
    warnings = [warning] if warning else []
    assigned, leftover = _assign(root, jobs)
    cells = [
        cell_from_folder(assigned[job.num], str(assigned[job.num]), job)
        if job.num in assigned
        else _missing(root, job)
        for job in jobs
    ]
    if not jobs:  # the jobs cannot be worked out: every folder is reported
        cells += [cell_from_folder(folder, str(folder)) for folder in leftover]
        leftover = []
    _guess_missing_gpus(cells)
    return cells, warnings, leftover


def _assign(root: Path, jobs: list[ExpectedJob]) -> tuple[dict[int, Path], list[Path]]:
    """Job number -> its folder (same overrides; the newest wins), and the folders left over.

    A folder without ``.hydra/overrides.yaml`` is matched by its job-number prefix; one with
    other overrides belongs to another sweep, whatever its number.
    """
    folders = sorted((f for f in root.iterdir() if f.is_dir() and _is_cell(f)), key=_written_at)
    labelled = {f: ov for f in folders if (ov := _overrides_of(f)) is not None}
    by_overrides = {ov: f for f, ov in labelled.items()}  # sorted by age: the newest wins
    unlabelled = [f for f in folders if f not in labelled]
    assigned: dict[int, Path] = {}
    for job in jobs:
        folder = by_overrides.get(job.overrides) or _by_number(unlabelled, job.num)
        if folder is not None:
            assigned[job.num] = folder
    used = set(assigned.values())
    return assigned, [f for f in sorted(folders) if f not in used]


def sweep_folders(root: Path) -> set[Path] | None:
    """The cell folders of the sweep's own jobs, or None when its jobs cannot be worked out."""
    if not (root / MULTIRUN).is_file():
        return None
    jobs, _ = expected_jobs(root / MULTIRUN)
    return set(_assign(root, jobs)[0].values()) if jobs else None


def _written_at(folder: Path) -> tuple[float, str]:
    marker = folder / ".hydra" / "overrides.yaml"
    return (marker.stat().st_mtime if marker.is_file() else 0.0, folder.name)


def _overrides_of(folder: Path) -> tuple[str, ...] | None:
    path = folder / ".hydra" / "overrides.yaml"
    return tuple(map(str, read_yaml(path) or [])) if path.is_file() else None


def _by_number(folders: Sequence[Path], num: int) -> Path | None:
    return next((f for f in folders if f.name.split("_", 1)[0] == str(num)), None)


def _missing(root: Path, job: ExpectedJob) -> CellRecord:
    note = f"job {job.num} ({' '.join(job.overrides)}) left no folder under {root}"
    return CellRecord(f"{root}/job {job.num}", None, "missing", job.identity, False,
                      overrides=job.overrides, note=note)  # fmt: skip


def _guess_missing_gpus(cells: list[CellRecord]) -> None:
    # A missing cell never said which GPU it was on; its sweep's other cells most likely share one.
    known = Counter(c.gpu for c in cells if c.status != "missing" and c.gpu != UNKNOWN)
    if known:
        gpu = known.most_common(1)[0][0]
        for cell in cells:
            if cell.status == "missing" and cell.gpu == UNKNOWN:
                cell.identity = replace(cell.identity, gpu_name=gpu)
                cell.simulated = cell.simulated or gpu.endswith("(simulated)")


def cell_from_folder(folder: Path, cell_id: str, job: ExpectedJob | None = None) -> CellRecord:
    """A present cell; a folder without ``result.json`` is MISSING (started, never finished)."""
    overrides = job.overrides if job else (_overrides_of(folder) or ())
    path = folder / RESULT
    if not path.is_file():
        ident = job.identity if job else _identity_from_hydra(folder)
        note = f"{folder} has no {RESULT}: the job started and never finished"
        return CellRecord(cell_id, folder, "missing", ident, overrides=overrides, note=note)
    return _from_result(folder, cell_id, overrides, _read_result(path))


def _identity_from_hydra(folder: Path) -> CellIdentity:
    path = folder / ".hydra" / "config.yaml"
    return identity_of_config(read_yaml(path) or {}, path) if path.is_file() else CellIdentity()


def _read_result(path: Path) -> CellResult:
    try:
        result = read_result(path.parent)
    except OSError as err:
        return CellResult.unreadable(f"{path}: not valid JSON: {err}")
    except ValueError as err:  # the message names the file and what is wrong with it
        return CellResult.unreadable(str(err))
    return result or CellResult.unreadable(f"{path}: gone while the report read it")


def _from_result(
    folder: Path, cell_id: str, overrides: tuple[str, ...], result: CellResult
) -> CellRecord:
    cell, status, note = result.cell, result.status, ""
    if status not in STATUSES:
        note = f"{result_path(folder)}: status {status!r} is not one of {', '.join(STATUSES)}"
        status = "failed"
    elif result.error:
        note = f"{result.error.kind}: {result.error.message.strip()[:300]}"
    elif status == "ok" and result.misconfigured():
        status = MISCONFIGURED
        note = "the server ran something else than the cell asked: " + "; ".join(
            result.misconfigured()
        )
    return CellRecord(cell_id, folder, status, cell, result.simulated, result, overrides, note)
