"""Which sweep a folder holds, in terms that survive moving it: where Hydra wrote it when it ran.

The MLflow export keys its runs by this (``mlflow_runs.run_key``), so a sweep exported, moved or
copied elsewhere, and exported again updates the runs it made instead of adding new ones. The
folder's present path cannot be the key (it is what moves); the sweep's own records can: each job's
``.hydra/hydra.yaml`` holds ``hydra.runtime.output_dir``, the job's folder as Hydra resolved it
when the job ran. ``multirun.yaml`` alone does not do: it keeps ``hydra.sweep.dir`` unresolved
(``outputs/multirun/${now:...}``: the same text for every sweep of the default layout).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.report.load.expected import read_yaml

_HYDRA_YAML = Path(".hydra") / "hydra.yaml"
_MULTIRUN = "multirun.yaml"


def sweep_origin(sweep: Path) -> str:
    """Where ``sweep`` was written when it ran, or its folder's name when nothing recorded that.

    In order: the folder above ``hydra.runtime.output_dir`` in a job's ``.hydra/hydra.yaml``;
    ``multirun.yaml``'s ``hydra.sweep.dir`` when it is a literal path (joined to the recorded
    ``hydra.runtime.cwd`` when relative); the folder's own name (then renaming it, not moving it,
    makes it another sweep to MLflow).

    Args:
        sweep: the sweep folder as the report found it (a lone cell's: the folder above it).
    """
    for job in sorted(p for p in sweep.iterdir() if (p / _HYDRA_YAML).is_file()):
        written = _runtime(read_yaml(job / _HYDRA_YAML)).get("output_dir")
        if isinstance(written, str) and written.startswith("/"):
            return str(Path(written).parent)
    if (sweep / _MULTIRUN).is_file():
        recorded = recorded_sweep_dir(read_yaml(sweep / _MULTIRUN))
        if recorded:
            return recorded
    return sweep.name


def recorded_sweep_dir(multirun: Any) -> str | None:
    """``hydra.sweep.dir`` of a parsed ``multirun.yaml`` as a full path, None when unresolved."""
    hydra = multirun.get("hydra") if isinstance(multirun, dict) else None
    if not isinstance(hydra, dict):
        return None
    folder = (hydra.get("sweep") or {}).get("dir")
    if not isinstance(folder, str) or not folder or "${" in folder:
        return None
    cwd = _runtime(multirun).get("cwd")
    if folder.startswith("/") or not isinstance(cwd, str):
        return folder
    return str(Path(cwd) / folder)


def _runtime(conf: Any) -> dict[str, Any]:
    hydra = conf.get("hydra") if isinstance(conf, dict) else None
    runtime = hydra.get("runtime") if isinstance(hydra, dict) else None
    return runtime if isinstance(runtime, dict) else {}
