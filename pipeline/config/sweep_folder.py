"""A sweep run into a folder that already holds another sweep is refused before it starts.

Hydra writes ``multirun.yaml`` over the old one and names cell folders by job number, so a
different sweep in the same folder would take over the earlier sweep's folders: its cells
measured again (their samples moved aside) under another sweep's name. The same sweep (the
same jobs) resumes; anything else names the jobs that differ and where to run it instead.
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


def other_sweep(sweep_dir: Path, hydra: dict[str, Any]) -> list[str]:
    """Why ``sweep_dir`` cannot take this sweep (empty: it is free, or holds this same sweep).

    Args:
        sweep_dir: ``hydra.sweep.dir`` of the sweep about to start.
        hydra: the sweep's ``hydra`` node (unresolved, as ``OmegaConf.to_container`` gives it).
    """
    saved = sweep_dir / MULTIRUN
    if not saved.is_file():
        return []
    try:
        earlier = (yaml.safe_load(saved.read_text()) or {}).get("hydra") or {}
    except yaml.YAMLError:
        return [f"{saved} cannot be read: move it away, or use another hydra.sweep.dir"]
    before, now = _measured(sweep_jobs(earlier)), _measured(sweep_jobs(hydra))
    if before is None or now is None or before == now:
        return []
    return [
        f"{sweep_dir} holds another sweep ({saved.name}: {len(before)} jobs); this one differs:",
        *_differences(before, now),
        "running it there would overwrite its multirun.yaml and measure its cell folders "
        "again under other settings. Run it with another hydra.sweep.dir=..., or the earlier "
        f"command to resume that sweep (delete {saved} to reuse the folder anyway)",
    ]


def _differences(before: list[list[str]], now: list[list[str]]) -> list[str]:
    lines = []
    for num in range(max(len(before), len(now))):
        was = " ".join(before[num]) if num < len(before) else "(no such job)"
        new = " ".join(now[num]) if num < len(now) else "(no such job)"
        if was != new:
            lines.append(f"  job {num}: was [{was}], now [{new}]")
    return lines[:10] + ([f"  ... {len(lines) - 10} more"] if len(lines) > 10 else [])
