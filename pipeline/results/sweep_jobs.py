"""The jobs of a Hydra sweep, from its saved ``hydra`` node: one module for both of its readers.

The report works out from them which cells a sweep should have (``pipeline.report.load.expected``);
the sweep check reads every job's values before the first cell starts
(``pipeline.config.sweep_checks``). Hydra's own parser and splitter are used, so job ``i`` here is
Hydra's job number ``i``.
"""

from __future__ import annotations

from typing import Any

BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


def sweep_jobs(hydra: dict[str, Any]) -> list[list[str]] | None:
    """Each job's overrides, in Hydra's job order, from a sweep's ``hydra`` node.

    None when the sweeper is not Hydra's basic one (its jobs cannot be worked out here).
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    sweeper = hydra.get("sweeper") or {}
    if sweeper.get("_target_", BASIC_SWEEPER) != BASIC_SWEEPER:
        return None
    params = [f"{k}={v}" for k, v in (sweeper.get("params") or {}).items()]
    task = list((hydra.get("overrides") or {}).get("task") or [])
    parsed = OverridesParser.create().parse_overrides(params + task)
    return [list(job) for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
