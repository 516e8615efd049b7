"""A baseline that runs beside its candidates (``sequential.baseline_runs=beside``).

With a parallel launcher (``hydra/launcher=local``, or ``slurm``) every cell of the sweep runs at
once. The baseline runs its repeats in rounds like a candidate and, after each, reads the live
records (``live_looks``) of the sweep's candidate jobs (``multirun.yaml``): it stops asking once
at least one candidate pairs with it and every candidate job has either ended, stopped this eval,
or pairs with another baseline (``open_candidates``); else it runs to ``max_repeats``. A
candidate job that has not started yet keeps it going, so a launcher that runs cells one after
the other (Hydra's basic one, baseline first) gets the old layout: a finished baseline.

A candidate picks its baseline by the report's rule among the finished cells and the running
ones (``choose_beside``), then before each look waits until the baseline has finished the
repeats the round needs (``wait_for_repeats``) and pairs with those only.

Why every verdict stays valid: a candidate's e-process bets (``pipeline.stats.anytime``) are
fixed from its earlier repeats before each step, and its p-value holds at any stopping time of
any filtration its wealth is a supermartingale for. The baseline's stop is such a stopping time:
it is decided after round ``j`` from the candidates' looks on repeats ``< j r`` only, and a
candidate's pairs at repeat ``r`` are fresh draws given all earlier repeats of every cell. A
candidate also never loses a round to it: the baseline stops only after that candidate's own
look stopped it. A look reads only whole rounds of the baseline (never the requests of a round
that happened to answer first, which would select pairs by their answer time).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.config.schema import SequentialConf
from pipeline.measuring.live_looks import (
    RUNNING,
    eval_entry,
    finished,
    read_live,
    running_keys,
)
from pipeline.results.baseline_choice import UNKNOWN, BaselineChoice, CellKey, choose_baseline
from pipeline.results.cell_error import CellError
from pipeline.results.store import read_result

if TYPE_CHECKING:
    from pipeline.report.load.expected import ExpectedJob

POLL_S = 0.2  # between two readings of the baseline's live record


def sweep_jobs(sweep: Path) -> list[ExpectedJob]:
    """The jobs of the sweep in folder ``sweep`` (its ``multirun.yaml``; [] for a single run)."""
    from pipeline.report.load.expected import expected_jobs

    path = sweep / "multirun.yaml"
    try:
        return expected_jobs(path)[0] if path.exists() else []
    except ValueError:
        return []


def candidate_folders(sweep: Path, baseline: str) -> list[Path]:
    """Every candidate job's folder in the sweep (``<num>_*``; named as Hydra will name it)."""
    out = []
    for job in sweep_jobs(sweep):
        if job.identity.variant == baseline:
            continue
        found = sorted(sweep.glob(f"{job.num}_*"))
        out.append(found[0] if found else sweep / f"{job.num}_")
    return out


def still_needed(entry: Mapping[str, Any] | None, ended: bool, me: str) -> bool | None:
    """Whether a candidate may still ask for this baseline's repeats of the eval.

    True: not at this eval yet, or running it against ``me``; None: it pairs with another
    baseline (or none), or ended without saying; False: it paired with ``me`` and its look
    stopped the eval, or it ended.
    """
    if entry is None:
        return None if ended else True
    if entry.get("baseline_dir") != me:
        return None
    return not ended and entry.get("state") == RUNNING


def open_candidates(states: Sequence[bool | None]) -> bool:
    """Whether the baseline must go on: some candidate needs it, or none paired with it yet."""
    return any(s is True for s in states) or not any(s is False for s in states)


def baseline_goes_on(cell_dir: Path, baseline: str, eval_name: str) -> bool:
    """``open_candidates`` of the sweep's candidate jobs, read from their folders now.

    A pairing is known only from a candidate's live record: a candidate that ended without one
    (failed before its evals) is not paired, and needs nothing more.
    """
    folders = candidate_folders(cell_dir.parent, baseline)
    return open_candidates([
        still_needed(eval_entry(f, eval_name), finished(f), str(cell_dir)) for f in folders
    ])  # fmt: skip


def behind(entry: Mapping[str, Any] | None, ended: bool, me: str, repeats: int) -> bool:
    """Whether a candidate running against ``me`` has not looked at ``repeats`` repeats yet."""
    return still_needed(entry, ended, me) is True and entry is not None and (
        int(entry.get("repeats", 0)) < repeats
    )  # fmt: skip


def wait_for_looks(
    cell_dir: Path, baseline: str, eval_name: str, repeats: int, wait_s: float
) -> None:
    """Wait until every candidate running against this baseline has looked at ``repeats``.

    So the baseline is never more than a round ahead of its candidates' looks: it stops on the
    round their last look needed, not rounds later. A candidate job that has started but is
    still starting its server (``starting``) is waited for too: on a loaded host the baseline's
    rounds otherwise ran ahead of a candidate one second late (14 repeats for a candidate's 8,
    CI, 2026-12-02). One at another eval, or not started (cells run one after the other), is
    not; after ``wait_s`` the baseline goes on without them.
    """
    deadline = time.monotonic() + wait_s
    folders = candidate_folders(cell_dir.parent, baseline)
    while time.monotonic() < deadline and any(
        starting(f) or behind(eval_entry(f, eval_name), finished(f), str(cell_dir), repeats)
        for f in folders
    ):
        time.sleep(POLL_S)


def starting(folder: Path) -> bool:
    """Whether a candidate's job has started (its folder is there) but reached no eval yet."""
    return folder.is_dir() and not finished(folder) and read_live(folder) is None


def choose_beside(
    cell: CellKey, finished_pool: Callable[[], list[CellKey]], sweep: Path,
    conf: SequentialConf, match: Sequence[str],
) -> BaselineChoice:  # fmt: skip
    """The baseline among finished and running cells, waiting for one the sweep will start.

    While none matches and a baseline job of the sweep has not ended, it waits (up to
    ``sequential.baseline_wait_s``); then the choice among the finished cells stands (the
    fixed design, with its note).
    """
    deadline = time.monotonic() + conf.baseline_wait_s
    while True:
        pool = [*finished_pool(), *running_keys(sweep)]
        choice = choose_baseline(cell, pool, conf.baseline, match)
        if choice.chosen is not None or not _baseline_coming(sweep, cell, conf.baseline, match):
            return choice
        if time.monotonic() > deadline:
            waited = f"waited {conf.baseline_wait_s:g} s for a running baseline"
            return BaselineChoice(None, f"{choice.note}; {waited}")
        time.sleep(POLL_S)


def _baseline_coming(sweep: Path, cell: CellKey, baseline: str, match: Sequence[str]) -> bool:
    # A baseline job of this sweep that may match (its model and KV dtype, where matched, as
    # the candidate's) and has not ended: it may still start or register.
    for job in sweep_jobs(sweep):
        ident = job.identity
        if ident.variant != baseline or any(
            m in match and (getattr(ident, m) or UNKNOWN) != getattr(cell, m)
            for m in ("model", "kv_dtype")
        ):
            continue
        if not any(finished(f) for f in sweep.glob(f"{job.num}_*")):
            return True
    return False


def wait_for_repeats(base_dir: Path, eval_name: str, need: int, wait_s: float) -> int | None:
    """Repeats of the baseline's eval a look may pair with, once it has ``need`` (or stopped).

    None: every repeat it has (it has ended: its samples are final).

    Raises:
        CellError: the baseline ended without ``ok``, or has not reached ``need`` repeats of
            the eval within ``wait_s`` seconds.
    """
    deadline = time.monotonic() + wait_s
    while True:
        if finished(base_dir):
            check_ended_baseline(base_dir)
            return None
        entry = eval_entry(base_dir, eval_name)
        if entry is not None and (entry["repeats"] >= need or entry["state"] != RUNNING):
            return int(entry["repeats"])
        if time.monotonic() > deadline:
            have = 0 if entry is None else entry["repeats"]
            raise CellError("sequential", _late(base_dir, eval_name, have, need, wait_s))
        time.sleep(POLL_S)


def _late(base_dir: Path, eval_name: str, have: int, need: int, wait_s: float) -> str:
    return (
        f"baseline {base_dir} has {have} of the {need} repeats of eval {eval_name} this look "
        f"needs after {wait_s:g} s (sequential.baseline_wait_s); is its cell running? Its "
        "samples and this cell's are kept: rerun the sweep to resume"
    )


def check_ended_baseline(base_dir: Path) -> None:
    """Raise ``CellError`` unless the ended baseline in ``base_dir`` is ``ok``."""
    try:
        result = read_result(base_dir)
    except ValueError as err:
        raise CellError("sequential", f"baseline {base_dir}: {err}") from err
    if result is None or result.status != "ok":
        status = "unreadable" if result is None else result.status.upper()
        raise CellError("sequential", f"baseline {base_dir} ended {status}: its candidates' "
                        "looks have no pairs to go on with (see its result.json)")  # fmt: skip
