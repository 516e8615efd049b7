"""Sequential early stopping inside a cell: repeats in rounds, a look after each.

The baseline variant's cell runs all ``max_repeats`` first (list it first in the sweep). A
candidate cell finds its baseline among the cells next to its own (or under
``sequential.baseline_dir``) by the rule the report pairs with (``pipeline.results
.baseline_choice``: same GPU, layout and match list, exact-softmax fallback), runs its repeats
in rounds and after each round pairs its samples with the baseline's by (question, repeat) and asks
``look`` (the report's own decision on those pairs): GO or NO-GO stops the eval, None runs the
next round. The default design (``statistic: eprocess``, ``pipeline.stats.anytime``) is
anytime-valid: its error rates stay at ``alpha`` however often it looks, wherever it stops, and
when a later run with a larger ``max_repeats`` extends it. Cells written with the
group-sequential design (``sequential.statistic=group_sequential``, written as ``null``;
``observed`` in the oldest cells) spend alpha over a fixed number of
looks instead. Without a baseline folder the cell runs every repeat (the fixed design) and says
why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pipeline.config.schema import SequentialConf
from pipeline.results.baseline_choice import (
    BaselineChoice,
    CellKey,
    choose_baseline,
    key_of_result,
)
from pipeline.results.cell_paths import RESULT_FILE, samples_path
from pipeline.results.eval_block import DESIGN_KEYS, SequentialBlock
from pipeline.results.store import read_result

if TYPE_CHECKING:  # scipy.stats/optimize cost a second of import: loaded only when used
    from pipeline.measuring.evaluation import EvalRun
    from pipeline.stats.sequential import SequentialDesign

P = TypeVar("P")
NO_BASELINE = "no baseline cell found: fixed design, all repeats"


def design_of(conf: SequentialConf, family: int = 1) -> SequentialDesign:
    """The statistical design behind the config (validates it); ``family``: see the design."""
    from pipeline.stats.nogo_split import BROKEN_SHARE
    from pipeline.stats.sequential import SequentialDesign

    statistic = "null" if conf.statistic == "group_sequential" else conf.statistic
    # The anytime design splits NO-GO's alpha between its checks; group-sequential cells read
    # each at the full level, as they always have (their looks' boundaries are spent per test).
    share = BROKEN_SHARE if statistic == "eprocess" else None
    return SequentialDesign(
        conf.max_repeats, conf.repeats_per_round, conf.alpha, conf.margin, conf.spending, family,
        statistic, share,
    )  # fmt: skip


def rounds(prompts: Sequence[P], repeat_of: Any, design: SequentialDesign) -> list[list[P]]:
    """Prompts split into rounds by repeat index: round j holds repeats [(j-1)r, jr)."""
    out: list[list[P]] = [[] for _ in range(design.n_looks)]
    for prompt in prompts:
        out[min(repeat_of(prompt) // design.repeats_per_round, design.n_looks - 1)].append(prompt)
    return out


def paired_diffs(
    records: Iterable[dict[str, Any]], baseline: Iterable[dict[str, Any]]
) -> dict[str, list[float]]:
    """Candidate minus baseline score per question, over the (question, repeat) pairs both have."""
    base = {
        (r["question_id"], r["repeat"]): float(bool(r["correct"]))
        for r in baseline
        if r.get("error_kind") is None
    }
    out: dict[str, list[float]] = {}
    for r in sorted(records, key=lambda r: (r["question_id"], r["repeat"])):
        key = (r["question_id"], r["repeat"])
        if key in base and r.get("error_kind") is None:
            out.setdefault(key[0], []).append(float(bool(r["correct"])) - base[key])
    return out


def _keyed(records: Iterable[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(str(r["question_id"]), int(r["repeat"])): r for r in records}


def look(
    records: Sequence[dict[str, Any]],
    baseline: Sequence[dict[str, Any]],
    design: SequentialDesign,
    look_index: int,
) -> str | None:
    """GO / NO-GO / None (continue) after round ``look_index`` (1-based).

    The report's own rule on ``pipeline.report.pairing``'s pairs (answered pairs, errored ones
    at their worst, broken prompts). Anytime design: ``anytime.anytime_verdict`` of the pairs
    so far, the very function and data the report decides with. Group-sequential design:
    ``signoff.look_verdict``, GO at the look's level and NO-GO at the family's share of it,
    which the report reads back through ``sequential_pvalues`` with the same split.
    """
    from pipeline.report.pairing import pair_samples
    from pipeline.stats.anytime import anytime_evidence, anytime_verdict
    from pipeline.stats.signoff import look_verdict

    if not records or not baseline:
        return None
    o = pair_samples(_keyed(baseline), _keyed(records)).outcomes
    if design.statistic == "eprocess":
        ev = anytime_evidence(o, design.margin, design.alpha, design.repeats_per_round)
        found = str(anytime_verdict(ev, design.alpha, design.family, design.broken_share)[()])
    else:
        found = str(look_verdict(o, design, look_index)[()])
    return found if found in ("GO", "NO-GO") else None


def family_size(cell_dir: Path, conf: SequentialConf, evals: int) -> int:
    """Candidates x evals whose NO-GO alarms share alpha: from the sweep's ``multirun.yaml``.

    Every job of the sweep whose variant is not ``conf.baseline`` is a candidate; without a
    readable ``multirun.yaml`` (a single run) the cell is a family of its own evals.
    """
    from pipeline.report.expected import expected_jobs

    path = cell_dir.parent / "multirun.yaml"
    try:
        jobs, _ = expected_jobs(path) if path.exists() else ([], None)
    except ValueError:
        jobs = []
    candidates = sum(1 for j in jobs if j.identity.get("variant") != conf.baseline)
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


def find_baseline(cell_dir: Path, me: CellKey, conf: SequentialConf) -> BaselineChoice:
    """The finished baseline cell of this cell, by the report's own rule and match list.

    The rule is ``pipeline.results.baseline_choice``; the match list is the policy
    ``sequential.tolerance``'s, the one ``mtp-eval-report`` judges with by default.
    """
    from pipeline.report.tolerance import load_tolerance

    match = load_tolerance(conf.tolerance, conf.baseline).match
    return choose_baseline(me, baseline_pool(cell_dir, conf), conf.baseline, match)


def baseline_records(baseline_dir: Path, eval_name: str) -> list[dict[str, Any]]:
    """The baseline cell's sample lines of one eval (empty when it has none)."""
    path = samples_path(baseline_dir, eval_name)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def run_sequential(
    conf: SequentialConf,
    run: EvalRun,
    todo: Sequence[Any],
    kept: list[dict[str, Any]],
    cell_dir: Path,
    cell: CellKey,
    evals: int = 1,
) -> tuple[list[dict[str, Any]], float, SequentialBlock]:
    """Run an eval's prompts in rounds, stopping once the look decides (I/O: sends requests).

    The baseline's samples are those of the eval of the same name (``run.ev.name``). ``evals``
    (the cell's evals) times the sweep's candidates is the family NO-GO's alpha is split over.

    Returns:
        The records sent now, the wall time, and the eval block's ``sequential``: the design, the
        cell's role, the last look and its decision.
    """
    from pipeline.measuring.evaluation import run_eval

    is_baseline = cell.variant == conf.baseline
    design = design_of(conf, 1 if is_baseline else family_size(cell_dir, conf, evals))
    # A design key left unset (None) is not written: such cells read as the older ones did.
    fields = {k: getattr(design, k) for k in DESIGN_KEYS if getattr(design, k) is not None}
    choice = None if is_baseline else find_baseline(cell_dir, cell, conf)
    if choice is None or choice.chosen is None:
        role = "baseline" if choice is None else f"{NO_BASELINE} ({choice.note})"
        new, wall = run_eval(run, list(todo)) if todo else ([], 0.0)
        return new, wall, SequentialBlock(role, design=fields)
    base_dir = Path(choice.chosen.folder)
    baseline = baseline_records(base_dir, run.ev.name)
    sent: list[dict[str, Any]] = []
    wall, decision, look_index = 0.0, None, 0
    for look_index, group in enumerate(rounds(todo, lambda p: p.repeat, design), start=1):
        if group:
            new, took = run_eval(run, group)
            sent, wall = sent + new, wall + took
        decision = look([*kept, *sent], baseline, design, look_index)
        if decision is not None:
            break
    block = SequentialBlock(
        "candidate", look_index, decision or "undecided", fields, baseline_dir=str(base_dir)
    )
    return sent, wall, block
