"""Cell folders -> ``CellRecord``s, with MISSING cells for jobs of a multirun that left no result.

Accepted inputs: a multirun folder (``multirun.yaml`` at its top), a single cell folder
(``result.json`` or ``.hydra/``), or any folder above them (searched for both).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.report.expected import ExpectedJob, expected_jobs, read_yaml
from pipeline.report.expected import base_identity as _identity_of_config
from pipeline.results import misconfigured, unverified_lines

RESULT, MULTIRUN = "result.json", "multirun.yaml"
STATUSES = ("ok", "failed", "unsupported", "planned")
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
    result: dict[str, Any] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    note: str = ""

    @property
    def name(self) -> str:
        """model/variant/kv/sp=/sd= (as the cell job names it)."""
        return (
            f"{self.model}/{self.variant}/{self.kv_dtype}/sp={self.skip_prefill}"
            f"/sd={self.skip_decode}"
        )

    @property
    def label(self) -> str:
        """Name, GPU and the simulated mark: how every output names the cell."""
        return f"{self.name} @ {self.gpu}" + (" [simulated]" if self.simulated else "")

    @property
    def unverified(self) -> list[str]:
        """Settings the cell asked for that its server did not report (so not checked)."""
        return unverified_lines(self.result)

    @property
    def evals(self) -> dict[str, Any]:
        """Per-eval summaries from result.json (empty when none)."""
        return dict(self.result.get("evals") or {})


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
                cells += found
                warnings += warn
                ignored += [
                    f"{folder}: not a job of {root / MULTIRUN} (an earlier sweep's cell)"
                    for folder in stale
                ]
            else:
                cells.append(cell_from_folder(root, str(root)))
    return cells, warnings, ignored


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
    cell_id: str, folder: Path | None, ident: dict[str, Any], overrides: Any, note: str
) -> CellRecord:
    """A MISSING cell, described by what the sweep (or its Hydra config) says it was."""
    return CellRecord(
        id=cell_id,
        folder=folder,
        status="missing",
        simulated=False,
        model=str(ident.get("model")),
        model_path=str(ident.get("model_path")),
        variant=str(ident.get("variant")),
        kv_dtype=str(ident.get("kv_dtype")),
        skip_prefill=ident.get("skip_prefill"),
        skip_decode=ident.get("skip_decode"),
        speculative=ident.get("speculative"),
        gpu="unknown",
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


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        return {
            "status": "failed",
            "error": {"kind": "unreadable_result", "message": f"{path}: not valid JSON: {err}"},
        }
    if not isinstance(data, dict):
        return {
            "status": "failed",
            "error": {"kind": "unreadable_result", "message": f"{path}: not a JSON object"},
        }
    return data


def _from_result(
    folder: Path, cell_id: str, overrides: tuple[str, ...], result: dict[str, Any]
) -> CellRecord:
    cell = result.get("cell") or {}
    skip = cell.get("skip_softmax") or {}
    spec = cell.get("speculative") or {}
    status = str(result.get("status"))
    note = ""
    if status not in STATUSES:
        note = f"{folder / RESULT}: status {status!r} is not one of {', '.join(STATUSES)}"
        status = "failed"
    elif result.get("error"):
        err = result["error"]
        note = f"{err.get('kind')}: {str(err.get('message', '')).strip()[:300]}"
    elif status == "ok" and misconfigured(result):
        status = MISCONFIGURED
        note = "the server ran something else than the cell asked: " + "; ".join(
            misconfigured(result)
        )
    return CellRecord(
        id=cell_id,
        folder=folder,
        status=status,
        simulated=bool(result.get("simulated")),
        model=str(cell.get("model")),
        model_path=str(cell.get("model_path")),
        variant=str(cell.get("variant")),
        kv_dtype=str(cell.get("kv_dtype")),
        skip_prefill=skip.get("prefill"),
        skip_decode=skip.get("decode"),
        speculative=spec if spec.get("algorithm") else None,
        gpu=str((cell.get("gpu") or {}).get("name") or "unknown"),
        result=result,
        overrides=overrides,
        note=note,
    )
