"""A sweep run into a folder that already holds another sweep says exactly what it moves.

Hydra writes ``multirun.yaml`` over the old one, so before it does, the earlier sweep's file is
kept as ``multirun.previous-<n>.yaml`` and the console names the jobs that differ. The earlier
sweep's cell folders stay where they are (the report judges only the jobs of the current
``multirun.yaml`` and lists the others as ignored); a cell folder that this sweep measures again
under other settings says what moved where (``pipeline.results.resume.claim_samples``). The same
sweep (the same jobs) resumes without a word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipeline.results.sweep_jobs import sweep_jobs

MULTIRUN = "multirun.yaml"
# Overrides that change how a cell runs, not what it measures (the config hash leaves them out):
# a resume may set them differently.
HOW_IT_RUNS = ("client.", "server.simulated.faults", "server.on_", "dry_run")


def _measured(jobs: list[list[str]] | None) -> list[list[str]] | None:
    if jobs is None:
        return None
    return [[o for o in job if not o.lstrip("+~").startswith(HOW_IT_RUNS)] for job in jobs]


def keep_other_sweep(sweep_dir: Path, hydra: dict[str, Any]) -> list[str]:
    """Keep another sweep's ``multirun.yaml`` aside before this one overwrites it; say so.

    Args:
        sweep_dir: ``hydra.sweep.dir`` of the sweep about to start.
        hydra: the sweep's ``hydra`` node (unresolved, as ``OmegaConf.to_container`` gives it).

    Returns:
        The lines to print (none when the folder is new or holds this same sweep).
    """
    saved = sweep_dir / MULTIRUN
    if not saved.is_file():
        return []
    try:
        earlier = (yaml.safe_load(saved.read_text()) or {}).get("hydra") or {}
        before = _measured(sweep_jobs(earlier))
    except (yaml.YAMLError, AttributeError, ValueError):
        before = []  # unreadable: kept aside all the same
    now = _measured(sweep_jobs(hydra))
    if before is None or now is None or before == now:
        return []
    kept = _free_name(sweep_dir, len(list(sweep_dir.glob("multirun.previous-*.yaml"))) + 1)
    saved.rename(kept)
    return [
        f"{sweep_dir} held another sweep ({len(before)} jobs): its {MULTIRUN} is kept as "
        f"{kept.name}; the jobs that differ:",
        *_differences(before, now),
        "its cell folders stay (the report judges only this sweep's jobs and lists the others "
        "as ignored); a folder this sweep measures again under other settings says what moved. "
        "Use another hydra.sweep.dir=... to keep the two apart",
    ]


def _free_name(sweep_dir: Path, n: int) -> Path:
    while (sweep_dir / f"multirun.previous-{n}.yaml").exists():
        n += 1
    return sweep_dir / f"multirun.previous-{n}.yaml"


def _differences(before: list[list[str]], now: list[list[str]]) -> list[str]:
    lines = []
    for num in range(max(len(before), len(now))):
        was = " ".join(before[num]) if num < len(before) else "(no such job)"
        new = " ".join(now[num]) if num < len(now) else "(no such job)"
        if was != new:
            lines.append(f"  job {num}: was [{was}], now [{new}]")
    return lines[:10] + ([f"  ... {len(lines) - 10} more"] if len(lines) > 10 else [])
