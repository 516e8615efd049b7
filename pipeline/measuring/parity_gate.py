"""``parity.gate``: the cell's own parity verdict, before its accuracy repeats (issue 39 item 4).

A candidate that re-scored its baseline's sequences is judged at once, with the report's rule
(``stats.parity_verdict.judge``) and the policy the report judges with by default
(``sequential.tolerance``'s ``parity:`` block): its divergence against the band that the A/A
cells (``parity.aa_variant``) and the reference pair that already re-scored the same sequences
set. NO-GO ends the cell's sign-off there: its evals are not run, and the result names the
repeats not spent. GO or INCONCLUSIVE (no A/A finished yet: no band) goes on to accuracy as
before, so the gate never stops a cell it cannot judge. The A/A and the reference are read
among the finished cells the baseline is chosen from (``baseline_lookup.baseline_pool``): list
them before the candidates in a sweep run one cell after the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.config.schema import SequentialConf
from pipeline.measuring.baseline_lookup import baseline_pool
from pipeline.report.judge.parity_checks import same_folder
from pipeline.report.load.parity_files import ParityFileError, ParitySummary, read_parity_summary
from pipeline.report.load.parity_policy import ParityPolicy
from pipeline.results.baseline_choice import CellKey
from pipeline.results.result_schema import ParityGateJson
from pipeline.stats.parity_verdict import ClusteredMean, judge

NO_GO, INCONCLUSIVE = "NO-GO", "INCONCLUSIVE"


@dataclass(frozen=True)
class Noise:
    """The most distant cell of a variant that re-scored the same sequences."""

    cell: CellKey
    mean: ClusteredMean


def gate_verdict(cell_dir: Path, seq: SequentialConf) -> ParityGateJson:
    """The cell's parity verdict now (``accuracy`` left for the caller to say)."""
    from pipeline.report.load.tolerance import load_tolerance

    policy = load_tolerance(seq.tolerance, seq.baseline).parity
    try:
        mine = read_parity_summary(cell_dir)
    except ParityFileError as err:
        return _undecided(f"parity/summary.json unreadable: {err}")
    mean = None if mine is None else mine.mean(policy.metric, policy.confidence)
    if mine is None or mean is None:
        return _undecided(f"no {policy.metric} against a baseline's sequences to judge")
    pool = [k for k in baseline_pool(cell_dir, seq) if k.status == "ok"]
    aa = _noise(pool, policy.aa_variant, mine, policy)
    if aa is None:
        return _undecided(
            f"{policy.metric} {mean.estimate:.3g} per token; no band: no finished "
            f"{policy.aa_variant} cell (the A/A) re-scored the same sequences"
        )
    ref = _noise(pool, policy.reference, mine, policy) if policy.reference else None
    verdict = judge(policy.verdict_rule, mean, aa.mean, ref.mean if ref else None)
    return {"verdict": verdict.verdict, "reason": verdict.reason, "aa_cell": aa.cell.name}


def _undecided(reason: str) -> ParityGateJson:
    return {"verdict": INCONCLUSIVE, "reason": reason, "aa_cell": None}


def _noise(
    pool: Sequence[CellKey], variant: str | None, mine: ParitySummary, policy: ParityPolicy
) -> Noise | None:
    """As the report's ``parity_checks._noise``: the largest upper bound among ``variant``'s."""
    found = []
    for key in pool:
        if key.variant != variant:
            continue
        try:
            theirs = read_parity_summary(Path(key.folder))
        except ParityFileError:
            continue  # the report names an unreadable file; the gate judges without it
        if theirs is None or not same_folder(theirs.source, mine.source):
            continue
        mean = theirs.mean(policy.metric, policy.confidence)
        if mean is not None:
            found.append(Noise(key, mean))
    return max(found, key=lambda n: n.mean.upper) if found else None
