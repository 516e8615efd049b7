"""Cell folders -> ``CellRecord``s, with MISSING cells for jobs of a multirun that left no result.

Accepted inputs: a multirun folder (``multirun.yaml`` at its top), a single cell folder
(``result.json`` or ``.hydra/``), or any folder above them (searched for both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.report.load.expected import ExpectedJob, expected_jobs, read_yaml
from pipeline.report.load.expected import base_identity as _identity_of_config
from pipeline.results.baseline_choice import layout_of
from pipeline.results.cell_paths import RESULT_FILE as RESULT
from pipeline.results.cell_paths import cell_name, result_path
from pipeline.results.result_types import STATUSES, CellResult, EvalSummary
from pipeline.results.store import read_result

MULTIRUN = "multirun.yaml"
_UNKNOWN = "unknown"  # an identity field neither the result nor the sweep says
# An ``ok`` result whose server ran another backend, KV dtype, speculative shape, model or kernels
# than the cell (``server.on_mismatch=warn``): never judged, never GO.
MISCONFIGURED = "misconfigured"


@dataclass
class CellRecord:
    """What the report knows about one cell (present or MISSING)."""

    id: str
    folder: Path | None
    status: str  # ok | failed | unsupported | planned | missing | misconfigured
    simulated: bool
    model: str
    model_path: str
    variant: str
    kv_dtype: str
    skip_prefill: Any
    skip_decode: Any
    speculative: dict[str, Any] | None
    gpu: str
    result: CellResult = field(default_factory=lambda: CellResult.from_json({}))
    overrides: tuple[str, ...] = ()
    note: str = ""
    sweep: str = ""  # the sweep folder it came from (a lone cell: the folder above it)
    shown_sweep: str = ""  # set when the report holds several sweeps: the label names it

    @property
    def name(self) -> str:
        """model/variant/kv/sp=/sd= (as the cell job names it)."""
        return cell_name(
            self.model, self.variant, self.kv_dtype, self.skip_prefill, self.skip_decode
        )

    @property
    def layout(self) -> str:
        """How the model was spread: ``""`` on one GPU, ``tp=2``, ``tp=2 over 2 nodes``."""
        return layout_of(*self.result.parallel)

    @property
    def label(self) -> str:
        """Name, layout, GPU, sweep (of several) and the simulated mark: how outputs name it."""
        spread = f" ({self.layout})" if self.layout else ""
        where = f" [sweep {self.shown_sweep}]" if self.shown_sweep else ""
        mark = " [simulated]" if self.simulated else ""
        return f"{self.name}{spread} @ {self.gpu}{where}{mark}"

    @property
    def unverified(self) -> list[str]:
        """Settings the cell asked for that its server did not report (so not checked)."""
        return self.result.unverified_lines()

    @property
    def evals(self) -> dict[str, EvalSummary]:
        """Per-eval summaries from result.json (empty when none)."""
        return dict(self.result.evals)


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
    return _missing_record(f"{root}/job {job.num}", None, job.identity, job.overrides, note)


def _missing_record(
    cell_id: str, folder: Path | None, ident: Mapping[str, Any], overrides: Any, note: str
) -> CellRecord:
    """A MISSING cell, described by what the sweep (or its Hydra config) says it was."""
    spec = ident.get("speculative")
    return _record(cell_id, folder, "missing", ident, overrides, note, Seen(speculative=spec))


@dataclass(frozen=True)
class Seen:
    """What only a result.json tells about a cell (a MISSING cell has the defaults)."""

    simulated: bool = False
    speculative: dict[str, Any] | None = None
    gpu: str = _UNKNOWN
    result: CellResult = field(default_factory=lambda: CellResult.from_json({}))


def _record(
    cell_id: str,
    folder: Path | None,
    status: str,
    ident: Mapping[str, Any],
    overrides: Any,
    note: str,
    seen: Seen,
) -> CellRecord:
    """The one place a ``CellRecord`` is made: ``ident`` holds the identity fields by name."""

    def text(key: str) -> str:
        value = ident.get(key)
        return _UNKNOWN if value is None else str(value)

    return CellRecord(
        id=cell_id,
        folder=folder,
        status=status,
        simulated=seen.simulated,
        model=text("model"),
        model_path=text("model_path"),
        variant=text("variant"),
        kv_dtype=text("kv_dtype"),
        skip_prefill=ident.get("skip_prefill"),
        skip_decode=ident.get("skip_decode"),
        speculative=seen.speculative,
        gpu=seen.gpu,
        result=seen.result,
        overrides=overrides,
        note=note,
    )


def _guess_missing_gpus(cells: list[CellRecord]) -> None:
    # A missing cell never said which GPU it was on; its sweep's other cells most likely share one.
    known = Counter(c.gpu for c in cells if c.status != "missing" and c.gpu != "unknown")
    if known:
        gpu = known.most_common(1)[0][0]
        for cell in cells:
            if cell.status == "missing" and cell.gpu == "unknown":
                cell.gpu = gpu
                cell.simulated = cell.simulated or gpu.endswith("(simulated)")


def cell_from_folder(folder: Path, cell_id: str, job: ExpectedJob | None = None) -> CellRecord:
    """A present cell; a folder without ``result.json`` is MISSING (started, never finished)."""
    overrides = job.overrides if job else (_overrides_of(folder) or ())
    path = folder / RESULT
    if not path.is_file():
        ident = job.identity if job else _identity_from_hydra(folder)
        note = f"{folder} has no {RESULT}: the job started and never finished"
        return _missing_record(cell_id, folder, ident, overrides, note)
    return _from_result(folder, cell_id, overrides, _read_result(path))


def _identity_from_hydra(folder: Path) -> dict[str, Any]:
    path = folder / ".hydra" / "config.yaml"
    return _identity_of_config(read_yaml(path) or {}, {}) if path.is_file() else {}


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
    ident = {
        "model": cell.model,
        "model_path": cell.model_path,
        "variant": cell.variant,
        "kv_dtype": cell.kv_dtype,
        "skip_prefill": cell.skip_prefill,
        "skip_decode": cell.skip_decode,
    }
    spec = dict(cell.speculative) if cell.speculative.get("algorithm") else None
    gpu = cell.gpu_name or _UNKNOWN
    seen = Seen(result.simulated, spec, gpu, result)
    return _record(cell_id, folder, status, ident, overrides, note, seen)
