"""Where a sequential candidate finds its baseline cell and reads the baseline's samples (I/O).

Among the cells next to its own (or under ``sequential.baseline_dir``), by the rule the report
pairs with (``pipeline.results.baseline_choice``); with ``sequential.baseline_runs=beside``
among the running cells of its sweep too (``sequential_beside``).
"""

from __future__ import annotations

import functools
from pathlib import Path

from evals.sample_line import SampleJson
from pipeline.config.schema import SequentialConf
from pipeline.measuring.live_looks import answered_records
from pipeline.measuring.sequential_beside import choose_beside, sweep_jobs, wait_for_repeats
from pipeline.results.baseline_choice import BaselineChoice, CellKey, choose_baseline, key_of_result
from pipeline.results.cell_paths import RESULT_FILE, samples_path
from pipeline.results.store import read_result


def family_size(cell_dir: Path, conf: SequentialConf, evals: int) -> int:
    """Candidates x evals whose NO-GO alarms share alpha: from the sweep's ``multirun.yaml``.

    Every job of the sweep whose variant is not ``conf.baseline`` is a candidate; without a
    readable ``multirun.yaml`` (a single run) the cell is a family of its own evals.
    """
    jobs = sweep_jobs(cell_dir.parent)
    candidates = sum(1 for j in jobs if j.identity.variant != conf.baseline)
    return max(1, candidates) * max(1, evals)


def _cell_folders(folder: Path) -> list[Path]:
    """``folder`` when it is a cell, else the cell folders right under it."""
    if (folder / RESULT_FILE).is_file():
        return [folder]
    return sorted(p.parent for p in folder.glob(f"*/{RESULT_FILE}"))


def baseline_pool(cell_dir: Path, conf: SequentialConf) -> list[CellKey]:
    """The cells a candidate may pair with, unreadable ones left out.

    Those of ``sequential.baseline_dir`` when set (a cell or a sweep folder), else the other
    cells of its own sweep.
    """
    folders = _cell_folders(Path(conf.baseline_dir) if conf.baseline_dir else cell_dir.parent)
    pool = []
    for folder in folders:
        try:
            other = read_result(folder)
        except (OSError, ValueError):
            continue
        if other is not None and folder != cell_dir:
            pool.append(key_of_result(other, folder))
    return pool


def find_baseline(
    cell_dir: Path, me: CellKey, conf: SequentialConf, beside: bool = False
) -> BaselineChoice:
    """The baseline cell of this cell, by the report's own rule and match list.

    The rule is ``pipeline.results.baseline_choice``; the match list is the policy
    ``sequential.tolerance``'s, the one ``mtp-eval-report`` judges with by default. Finished
    cells only, unless ``beside`` (``sequential_beside.choose_beside``: running ones too, of the
    cell's own sweep, ``sequential.baseline_dir`` unset).
    """
    from pipeline.report.load.tolerance import load_tolerance

    match = load_tolerance(conf.tolerance, conf.baseline).match
    if beside and not conf.baseline_dir:
        pool = functools.partial(baseline_pool, cell_dir, conf)
        return choose_beside(me, pool, cell_dir.parent, conf, match)
    return choose_baseline(me, baseline_pool(cell_dir, conf), conf.baseline, match)


def baseline_records(
    baseline_dir: Path, eval_name: str, wait: tuple[int, float] | None = None
) -> list[SampleJson]:
    """The baseline cell's sample lines of one eval (empty when it has none).

    ``wait`` (repeats, seconds): a running baseline's, once it has finished that many repeats
    (``sequential_beside.wait_for_repeats``), those repeats only.
    """
    have = None if wait is None else wait_for_repeats(baseline_dir, eval_name, *wait)
    records = answered_records(samples_path(baseline_dir, eval_name))
    return records if have is None else [r for r in records if int(r["repeat"]) < have]
