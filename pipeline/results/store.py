"""``result.json`` on disk: the contract between a cell job and the report.

Its layout is ``pipeline.results.result_schema`` (which also checks it), its typed value
``pipeline.results.result_types.CellResult``, its place ``pipeline.results.cell_paths``.

Written atomically (temporary file, fsync, rename) so a reader never sees half a result, and
always written, from a ``finally``, whatever happened to the cell.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals.json_text import strict_dumps
from pipeline.results.cell_paths import result_path
from pipeline.results.result_schema import shape_problems
from pipeline.results.result_types import CellResult


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that the file is either old or complete, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, _mode_of_new_files())  # mkstemp makes it 0600: readable by the group too
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(strict_dumps(data, indent=1))  # NaN as null: every file is strict JSON
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_of_new_files() -> int:
    """The mode ``open()`` gives a new file here (0o666 less the umask), as for every output."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def read_result(cell_dir: Path) -> CellResult | None:
    """The cell's result, or None when it has none (yet).

    Raises:
        ValueError: when result.json is not valid JSON, not an object, of a newer schema, or an
            ``ok`` result with a block of the wrong JSON type (``shape_problems``).
    """
    path = result_path(cell_dir)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    try:
        typed = CellResult.from_json(data)
    except ValueError as err:  # a newer schema_version, a skip-softmax factor no number
        raise ValueError(f"{path}: {err}") from err
    if problems := shape_problems(data):
        raise ValueError(f"{path}: " + "; ".join(f"{k} {why}" for k, why in problems.items()))
    return typed


def write_result(cell_dir: Path, result: Mapping[str, Any]) -> CellResult:
    """Write a cell's result.json (atomically) through the typed contract; returns it typed."""
    typed = CellResult.from_json(result)
    write_json_atomic(result_path(cell_dir), typed.to_json())
    return typed


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of the settings that define a cell's measurements."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
