"""``parity_vs_baseline``: a candidate's logprob divergence from its baseline, judged (issue 39).

Each cell that re-scored another cell's sequences (``parity/summary.json``) is paired with its
baseline by the report's own rule (``pairing.find_baseline``); when that cell is not the one
whose sequences it re-scored, a cell of the baseline variant that it re-scored stands in (a KV
dtype or skip factor compared with the exact-softmax, bf16 baseline), and the check says so.
The band comes from the cells of the policy's ``aa_variant`` (and ``reference``) that
re-scored the same sequences (``stats.parity_verdict.judge``): no A/A, no band, INCONCLUSIVE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.report.judge.check_kinds import PARITY_VS_BASELINE
from pipeline.report.judge.pairing import find_baseline
from pipeline.report.judge.parity_numbers import ParityBand, ParityNumbers, PositionBin
from pipeline.report.judge.verdicts import (
    ERROR,
    INCONCLUSIVE,
    INFO,
    NO_BASELINE,
    Check,
    make_check,
)
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.parity_files import (
    ParityFileError,
    ParitySummary,
    read_parity_summary,
    worst_sequences,
)
from pipeline.report.load.parity_policy import ParityPolicy
from pipeline.report.load.tolerance import Tolerance
from pipeline.stats.parity_verdict import ClusteredMean, judge

WORST = 5  # sequences named per candidate


def summaries_of(cells: Sequence[CellRecord]) -> dict[str, ParitySummary | ParityFileError]:
    """Each ok cell's ``parity/summary.json`` by cell id (the error where it is unreadable)."""
    found: dict[str, ParitySummary | ParityFileError] = {}
    for cell in cells:
        if cell.folder is None or cell.status != "ok":
            continue
        try:
            summary = read_parity_summary(cell.folder)
        except ParityFileError as err:
            found[cell.id] = err
            continue
        if summary is not None:
            found[cell.id] = summary
    return found


def parity_checks(
    cells: Sequence[CellRecord], pool: Sequence[CellRecord], tol: Tolerance
) -> list[Check]:
    """One ``parity_vs_baseline`` check per cell under test that re-scored a cell's sequences.

    The baseline comes from ``pool``; the A/A and the reference pair that set the band from every
    cell the report read: with ``--baseline-dir`` naming only fa3, an A/A or flashinfer cell among
    the inputs was passed over and the band silently fell to 0 (2026-12-06, the H200 frontier).
    """
    summaries = summaries_of([*cells, *pool])
    noise = band_pool(cells, pool)
    out = []
    for cell in cells:
        found = summaries.get(cell.id)
        if found is None:  # the baseline variant at another KV dtype or factor is judged too
            continue
        if isinstance(found, ParityFileError):
            out.append(make_check(cell, None, PARITY_VS_BASELINE, ERROR, str(found)))
            continue
        out.append(_check(cell, found, (pool, noise), summaries, tol))
    return out


def band_pool(cells: Sequence[CellRecord], pool: Sequence[CellRecord]) -> list[CellRecord]:
    """Where a band's A/A and reference pair are looked for: the baselines and the cells under test.

    A noise measurement is not a baseline: ``--baseline-dir`` need not name it.
    """
    in_pool = {c.id for c in pool}
    return [*pool, *(c for c in cells if c.id not in in_pool)]


def same_folder(a: Path | None, b: Path) -> bool:
    """Whether ``a`` is the folder ``b``.

    Resolved, so a relative sequences_from matches too; where either path no longer exists
    (the cells were moved after the run: a lease's cells, committed to a results folder, name
    the GPU host's paths), by the names of the sweep and cell folders.
    """
    if a is None:
        return False
    here, there = a.resolve(), b.resolve()
    if here == there:
        return True
    moved = not (here.exists() and there.exists())
    return moved and len(here.parts) > 2 and here.parts[-2:] == there.parts[-2:]


def paired_source(
    cell: CellRecord, summary: ParitySummary, pool: Sequence[CellRecord], tol: Tolerance
) -> tuple[CellRecord | None, str]:
    """The baseline cell the divergence was measured against, and how it was chosen."""
    chosen, note = find_baseline(cell, pool, tol.baseline, tol.match)
    if chosen is not None and same_folder(chosen.folder, summary.source):
        return chosen, f"the report's baseline ({note})" if note else "the report's baseline"
    named = [c for c in pool if c.variant == tol.baseline and same_folder(c.folder, summary.source)]
    if named:
        other = f"; the report's own choice is {chosen.label}" if chosen is not None else ""
        return named[0], f"parity.sequences_from names this {tol.baseline} cell{other}"
    why = f"{summary.source} is not a {tol.baseline} cell of this report"
    return None, f"{why}; the report's baseline: {chosen.label if chosen else note}"


def _noise(
    variant: str | None,
    summary: ParitySummary,
    pool: Sequence[CellRecord],
    summaries: dict[str, ParitySummary | ParityFileError],
    policy: ParityPolicy,
) -> tuple[CellRecord, ClusteredMean] | None:
    """The most distant cell of ``variant`` that re-scored the same sequences (None: none)."""
    found = []
    for other in pool:
        theirs = summaries.get(other.id)
        if other.variant != variant or not isinstance(theirs, ParitySummary):
            continue
        if same_folder(theirs.source, summary.source):
            mean = theirs.mean(policy.metric, policy.confidence)
            if mean is not None:
                found.append((other, mean))
    return max(found, key=lambda f: f[1].upper) if found else None


def _check(
    cell: CellRecord,
    summary: ParitySummary,
    pools: tuple[Sequence[CellRecord], Sequence[CellRecord]],  # the baselines', the band's
    summaries: dict[str, ParitySummary | ParityFileError],
    tol: Tolerance,
) -> Check:
    policy = tol.parity
    pool, noise = pools
    base, how = paired_source(cell, summary, pool, tol)
    if base is None:
        return make_check(cell, None, PARITY_VS_BASELINE, NO_BASELINE, how)
    mean = summary.mean(policy.metric, policy.confidence)
    if mean is None:
        why = f"{summary.folder}/parity/summary.json has no {policy.metric} (top_k 0?)"
        return make_check(cell, None, PARITY_VS_BASELINE, ERROR, why)
    aa = _noise(policy.aa_variant, summary, noise, summaries, policy)
    numbers = _numbers(summary, mean, policy, base, how)
    if aa is None:
        message = (
            f"{policy.metric} {mean.estimate:.3g} per token; no band: no {policy.aa_variant} "
            f"cell (the A/A, parity.aa_variant) re-scored {base.label}'s sequences"
        )
        return make_check(cell, None, PARITY_VS_BASELINE, INCONCLUSIVE, message, numbers)
    if cell.variant == policy.reference:  # it sets the others' band: not its own yardstick
        message = (
            f"{policy.metric} {mean.estimate:.3g} per token (upper {mean.upper:.3g}): the "
            f"reference pair (parity.reference), whose distance from {base.label} sets the "
            "band of the other variants; not judged against itself"
        )
        return make_check(cell, None, PARITY_VS_BASELINE, INFO, message, numbers)
    ref = _noise(policy.reference, summary, noise, summaries, policy) if policy.reference else None
    verdict = judge(policy.verdict_rule, mean, aa[1], ref[1] if ref else None)
    band = verdict.band
    judged = ParityBand(
        band=band.limit, band_source=band.source, band_noise=band.noise,
        band_why=_why(band.source, aa[0], ref[0] if ref else None, policy),
        aa_cell=aa[0].label, aa_upper=aa[1].upper,
        reference_cell=ref[0].label if ref else None, reference_upper=ref[1].upper if ref else None,
    )  # fmt: skip
    numbers = replace(numbers, judged=judged)
    return make_check(cell, None, PARITY_VS_BASELINE, verdict.verdict, verdict.reason, numbers)


def _why(source: str, aa: CellRecord, ref: CellRecord | None, policy: ParityPolicy) -> str:
    if source == "ceiling":
        return f"the policy's ceiling {policy.ceiling:g}"
    if source == "floor":
        return f"the policy's floor {policy.floor:g}"
    cell = ref if source == "reference" and ref is not None else aa
    return f"{policy.noise_factor:g} x the upper bound of {cell.label}"


def _numbers(
    summary: ParitySummary, mean: ClusteredMean, policy: ParityPolicy, base: CellRecord, how: str
) -> ParityNumbers:
    top1 = summary.mean("top1_disagree", policy.confidence)
    try:
        worst = worst_sequences(summary, policy.metric, WORST, base.folder)
    except (ParityFileError, KeyError, TypeError, ValueError) as err:
        worst, how = [], f"{how}; worst sequences not read: {err}"
    bins = [PositionBin(b.low, b.high, b.means.get(policy.metric), b.tokens.get(policy.metric, 0))
            for b in summary.bins]  # fmt: skip
    return ParityNumbers(
        metric=policy.metric,
        divergence=mean.estimate,
        lower=mean.lower,
        upper=mean.upper,
        se=mean.se,
        questions=mean.questions,
        tokens=mean.tokens,
        confidence=policy.confidence,
        ceiling=policy.ceiling,
        floor=policy.floor,
        noise_factor=policy.noise_factor,
        sequences_from=str(base.folder),  # where its samples are now (it may have moved)
        baseline_cell=base.label,
        paired_by=how,
        top1_agreement=None if top1 is None else 1.0 - top1.estimate,
        bins=bins,
        worst=worst,
    )
