"""``result.json``: the contract between a cell job and the report (DESIGN section 7).

Written atomically (temporary file, fsync, rename) so a reader never sees half a result, and
always written, from a ``finally``, whatever happened to the cell.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
RESULT_FILE = "result.json"
STATUSES = ("ok", "failed", "unsupported", "planned")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that the file is either old or complete, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, _mode_of_new_files())  # mkstemp makes it 0600: readable by the group too
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=False, default=str)
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


def read_result(cell_dir: Path) -> dict[str, Any] | None:
    """The cell's result, or None when it has none (yet)."""
    path = cell_dir / RESULT_FILE
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of the settings that define a cell's measurements."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def misconfigured(result: dict[str, Any]) -> list[str]:
    """What a cell's server ran other than the cell asked; a cell with any is never judged.

    Verified mismatches (``server.on_mismatch=warn`` let the cell go on), and kernels (``runs``)
    other than the ones its variant's name stands for (``label_runs``).
    """
    found = [
        f"{m.get('key')}: asked {m.get('requested')!r}, server runs {m.get('observed')!r}"
        for m in result.get("mismatches") or []
        if isinstance(m, dict) and m.get("verifiable", True)
    ]
    runs, label = result.get("runs") or {}, result.get("label_runs") or {}
    if any("attention" in line.split(":", 1)[0] for line in found):
        return found  # the backend keys already say which kernels differ
    for phase, kernel in label.items():
        line = f"runs.{phase}: asked {kernel!r}, server runs {runs.get(phase)!r}"
        if kernel != "default" and phase in runs and runs[phase] != kernel and line not in found:
            found.append(line)
    return found


def unverified_lines(result: dict[str, Any]) -> list[str]:
    """The settings a cell asked for that its server did not report, as ``key=value``."""
    found = result.get("unverified") or []
    return [
        f"{u.get('key')}={asked_text(u.get('requested'))}" for u in found if isinstance(u, dict)
    ]


def asked_text(value: Any) -> str:
    """A requested value in words: None is "must be unset" (exact softmax), not the word None."""
    return "unset" if value is None else repr(value)
