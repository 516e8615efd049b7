"""A fixed-design cell rerun into its own folder: the earlier runs its folder still holds.

A fixed design is level alpha once, at its planned repeats. A cell rerun with more repeats into
the same folder (another ``repeats`` is another config hash: ``results/resume.claim_samples``
moves the earlier samples to ``samples.previous-<hash>/`` and measures again) until it says GO
is not: rerun at 8, 16, 24 and 32 repeats, a candidate exactly at the margin was GO 13.9% of the
time (benchmarks/results/signoff_dependence.md). The report therefore reads such a cell's
accuracy as invalid, naming the earlier run; the anytime design (``sequential.enabled``) is the
one to extend. Samples moved aside because the server ran something else
(``-misconfigured-``) or another client's traffic crowded it (``-foreign-traffic``) were never
a valid measurement, and do not count.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.results.cell_paths import samples_path

_INVALID_RUNS = ("-misconfigured-", "-foreign-traffic")


def earlier_runs(folder: Path | None, eval_name: str) -> list[str]:
    """Names of the folder's set-aside sample folders holding an earlier run of ``eval_name``."""
    if folder is None or not folder.is_dir():
        return []
    found = []
    for kept in sorted(folder.glob("samples.previous-*")):
        if any(mark in kept.name for mark in _INVALID_RUNS):
            continue
        path = kept / samples_path(folder, eval_name).name
        if path.is_file() and path.stat().st_size > 0:
            found.append(kept.name)
    return found


def rerun_note(runs: list[str], repeats: int) -> str:
    """Why the cell's accuracy verdict is invalid, naming the earlier runs."""
    return (
        f"invalid: this fixed-design cell was rerun into its folder ({', '.join(runs)}/ holds an "
        f"earlier run; this one has {repeats} repeats): a fixed design rerun until it decides is "
        "not level alpha. Extend with sequential.enabled=true (anytime-valid), or start a new "
        "folder and keep its first verdict"
    )
