"""Sequential early stopping inside a cell: repeats in rounds, a look after each.

A candidate cell finds its baseline (``baseline_lookup``: the rule the report pairs with), runs
its repeats in rounds and after each round pairs its samples with the baseline's by (question,
repeat) and asks ``look`` (the report's own decision on those pairs): GO or NO-GO stops the
eval, None runs the next round. With ``sequential.baseline_runs=first`` the baseline variant's
cell runs all ``max_repeats`` first (list it first in the sweep) and candidates pair with it
once it has finished; with ``beside`` it runs in rounds beside its candidates and stops once
every candidate paired with it has stopped (``sequential_beside``, which says why every
verdict stays valid). The default design (``statistic: eprocess``, ``pipeline.stats.anytime``)
is anytime-valid: its error rates stay at ``alpha`` however often it looks, wherever it stops,
and when a later run with a larger ``max_repeats`` extends it. Cells written with the
group-sequential design (``sequential.statistic=group_sequential``, written as ``null``;
``observed`` in the oldest cells) spend alpha over a fixed number of looks instead. Without a
baseline the cell runs every repeat (the fixed design) and says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from evals.sample_line import SampleJson
from pipeline.config.schema import SequentialConf
from pipeline.measuring.baseline_lookup import baseline_records, family_size, find_baseline
from pipeline.measuring.live_looks import DONE, RUNNING, STOPPED, live_entry, write_live
from pipeline.measuring.sequential_beside import baseline_goes_on, wait_for_looks
from pipeline.results.baseline_choice import CellKey
from pipeline.results.eval_block import DESIGN_KEYS, SequentialBlock

if TYPE_CHECKING:  # scipy.stats/optimize cost a second of import: loaded only when used
    from pipeline.measuring.evaluation import EvalRun
    from pipeline.report.judge.pairing import Samples
    from pipeline.stats.sequential import SequentialDesign

P = TypeVar("P")
NO_BASELINE = "no baseline cell found: fixed design, all repeats"
BASELINE_STOPPED = "stopped: every candidate paired with it had stopped"
COPIES = (
    "stopped: repeats are copies (greedy decoding, no question's answers vary across its "
    "repeats on either side): more repeats cannot inform, more questions or server starts can"
)


def greedy(sampling: Any) -> bool:
    """Whether the eval's sampling settings make the server decode greedily."""
    return float(sampling.temperature) == 0.0 or sampling.top_k == 1


def design_of(conf: SequentialConf, family: int = 1, is_greedy: bool = False) -> SequentialDesign:
    """The statistical design behind the config (validates it); ``family``: see the design.

    Under greedy decoding the anytime design plans a single look (its alpha nearly whole at the
    first round): repeats within a start are copies, so later looks would mostly repeat it.
    """
    from pipeline.stats.nogo_split import BROKEN_SHARE
    from pipeline.stats.sequential import SequentialDesign

    statistic = "null" if conf.statistic == "group_sequential" else conf.statistic
    # The anytime design splits NO-GO's alpha between its checks; group-sequential cells read
    # each at the full level, as they always have (their looks' boundaries are spent per test).
    share = BROKEN_SHARE if statistic == "eprocess" else None
    planned = 1 if is_greedy and statistic == "eprocess" else None
    # Anytime cells spend alpha at the looks whose repeats double (pipeline.stats.look_schedule).
    looks = "doubling" if statistic == "eprocess" else None
    return SequentialDesign(
        conf.max_repeats, conf.repeats_per_round, conf.alpha, conf.margin, conf.spending, family,
        statistic, share, planned, looks,
    )  # fmt: skip


def rounds(prompts: Sequence[P], repeat_of: Any, design: SequentialDesign) -> list[list[P]]:
    """Prompts split into rounds by repeat index: round j holds repeats [(j-1)r, jr)."""
    out: list[list[P]] = [[] for _ in range(design.n_looks)]
    for prompt in prompts:
        out[min(repeat_of(prompt) // design.repeats_per_round, design.n_looks - 1)].append(prompt)
    return out


def paired_diffs(
    records: Iterable[SampleJson], baseline: Iterable[SampleJson]
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


def _keyed(records: Iterable[SampleJson]) -> Samples:
    # The report's pairing reads sample lines as the JSON objects they are.
    return cast("Samples", {(str(r["question_id"]), int(r["repeat"])): r for r in records})


def look(
    records: Sequence[SampleJson],
    baseline: Sequence[SampleJson],
    design: SequentialDesign,
    look_index: int,
) -> str | None:
    """GO / NO-GO / None (continue) after round ``look_index`` (1-based).

    The report's own rule on ``pipeline.report.judge.pairing``'s pairs (answered pairs, errored ones
    at their worst, broken prompts). Anytime design: ``anytime.anytime_verdict`` of the pairs
    so far, the very function and data the report decides with. Group-sequential design:
    ``signoff.look_verdict``, GO at the look's level and NO-GO at the family's share of it,
    which the report reads back through ``sequential_pvalues`` with the same split.
    """
    from pipeline.report.judge.pairing import pair_samples
    from pipeline.stats.anytime import anytime_evidence, anytime_verdict
    from pipeline.stats.signoff import look_verdict

    if not records or not baseline:
        return None
    o = pair_samples(_keyed(baseline), _keyed(records)).outcomes
    if design.statistic == "eprocess":
        ev = anytime_evidence(o, design.margin, design.alpha, design.schedule)
        found = str(anytime_verdict(ev, design.alpha, design.family, design.broken_share)[()])
    else:
        found = str(look_verdict(o, design, look_index)[()])
    return found if found in ("GO", "NO-GO") else None


def copies_only(records: Sequence[SampleJson], baseline: Sequence[SampleJson]) -> bool:
    """Whether 2+ repeats are paired and no question's answers vary on either side."""
    from pipeline.report.judge.pairing import pair_samples
    from pipeline.stats.dependence import within_question

    if not records or not baseline:
        return False
    o = pair_samples(_keyed(baseline), _keyed(records)).outcomes
    if o.base.shape[-1] < 2:
        return False
    return not within_question(o.base, o.cand).repeats_vary


def run_sequential(
    conf: SequentialConf,
    run: EvalRun,
    todo: Sequence[Any],
    kept: list[SampleJson],
    cell_dir: Path,
    cell: CellKey,
    evals: int = 1,
) -> tuple[list[SampleJson], float, SequentialBlock]:
    """Run an eval's prompts in rounds, stopping once the look decides (I/O: sends requests).

    The baseline's samples are those of the eval of the same name (``run.ev.name``). ``evals``
    (the cell's evals) times the sweep's candidates is the family NO-GO's alpha is split over.
    With ``baseline_runs=beside`` the baseline runs in rounds too and each cell keeps its live
    record (``sequential_beside``).

    Returns:
        The records sent now, the wall time, and the eval block's ``sequential``: the design, the
        cell's role, the last look and its decision.
    """
    from pipeline.measuring.evaluation import run_eval

    beside = conf.baseline_runs == "beside"  # checked at compose time (config/checks.py)
    is_baseline = cell.variant == conf.baseline
    family = 1 if is_baseline else family_size(cell_dir, conf, evals)
    design = design_of(conf, family, greedy(run.target.sampling))
    # A design key left unset (None) is not written: such cells read as the older ones did.
    fields = {k: getattr(design, k) for k in DESIGN_KEYS if getattr(design, k) is not None}
    if is_baseline and beside:
        return _baseline_rounds(conf, run, todo, design, cell_dir, cell, fields)
    choice = None if is_baseline else find_baseline(cell_dir, cell, conf, beside)
    if choice is None or choice.chosen is None:
        if beside and choice is not None:  # no baseline waits for this candidate
            write_live(cell_dir, cell, run.ev.name, live_entry("candidate", DONE, 0))
        role = "baseline" if choice is None else f"{NO_BASELINE} ({choice.note})"
        new, wall = run_eval(run, list(todo)) if todo else ([], 0.0)
        return new, wall, SequentialBlock(role, design=fields)
    base_dir = Path(choice.chosen.folder)
    live = Live(cell_dir, cell, run.ev.name, str(base_dir)) if beside else None
    sent, wall, decision, look_index = _candidate_rounds(
        conf, run, todo, kept, design, base_dir, live
    )
    block = SequentialBlock(
        "candidate", look_index, decision or "undecided", fields, baseline_dir=str(base_dir)
    )
    return sent, wall, block


@dataclass(frozen=True)
class Live:
    """Where a cell running beside its baseline keeps its live record, and of which eval."""

    cell_dir: Path
    cell: CellKey
    eval_name: str
    baseline_dir: str | None = None

    def say(self, role: str, state: str, repeats: int) -> None:
        """Rewrite this eval's entry of the record."""
        entry = live_entry(role, state, repeats, self.baseline_dir)
        write_live(self.cell_dir, self.cell, self.eval_name, entry)


def repeats_of(records: Sequence[SampleJson]) -> int:
    """Repeats a side has (1 + its largest repeat index; 0 without records)."""
    return 1 + max((int(r["repeat"]) for r in records), default=-1)


def _candidate_rounds(
    conf: SequentialConf, run: EvalRun, todo: Sequence[Any], kept: list[SampleJson],
    design: SequentialDesign, base_dir: Path, live: Live | None,
) -> tuple[list[SampleJson], float, str | None, int]:  # fmt: skip
    """A candidate's rounds and looks; ``live``: its baseline runs beside it, read per round."""
    from pipeline.measuring.evaluation import run_eval

    name = run.ev.name
    finished_base = None if live else baseline_records(base_dir, name)
    if live:
        live.say("candidate", RUNNING, 0)
    sent: list[SampleJson] = []
    wall, decision, look_index = 0.0, None, 0
    for look_index, group in enumerate(rounds(todo, lambda p: p.repeat, design), start=1):
        if group:
            new, took = run_eval(run, group)
            sent, wall = sent + new, wall + took
        need = design.max_repeats if look_index == design.n_looks else design.repeats_at(look_index)
        baseline = finished_base
        if baseline is None:
            baseline = baseline_records(base_dir, name, (need, conf.baseline_wait_s))
        decision = look([*kept, *sent], baseline, design, look_index)
        # A baseline beside it that stopped short of this round gives no more pairs.
        short = live is not None and decision is None and repeats_of(baseline) < need
        if (
            decision is None
            and greedy(run.target.sampling)
            and copies_only([*kept, *sent], baseline)
        ):
            decision = COPIES
        if live:
            live.say("candidate", RUNNING if decision is None and not short else STOPPED, need)
        if decision is not None or short:
            break
    return sent, wall, decision, look_index


def _baseline_rounds(
    conf: SequentialConf, run: EvalRun, todo: Sequence[Any], design: SequentialDesign,
    cell_dir: Path, cell: CellKey, fields: dict[str, Any],
) -> tuple[list[SampleJson], float, SequentialBlock]:  # fmt: skip
    """A baseline beside its candidates: rounds until none of them needs more (or the last)."""
    from pipeline.measuring.evaluation import run_eval

    live = Live(cell_dir, cell, run.ev.name)
    live.say("baseline", RUNNING, 0)
    groups = rounds(todo, lambda p: p.repeat, design)
    sent: list[SampleJson] = []
    wall = 0.0
    for j, group in enumerate(groups, start=1):
        if group:
            new, took = run_eval(run, group)
            sent, wall = sent + new, wall + took
        if j == len(groups):
            break
        live.say("baseline", RUNNING, design.repeats_at(j))
        wait_for_looks(
            cell_dir, conf.baseline, run.ev.name, design.repeats_at(j), conf.baseline_wait_s
        )
        if not baseline_goes_on(cell_dir, conf.baseline, run.ev.name):
            live.say("baseline", STOPPED, design.repeats_at(j))
            return sent, wall, SequentialBlock("baseline", j, BASELINE_STOPPED, fields)
    live.say("baseline", DONE, design.max_repeats)
    return sent, wall, SequentialBlock("baseline", design=fields)
