"""``decode_parity_vs_baseline``: decoding against prefill, judged (issue 39 item 2).

Each cell's ``parity/decode.json`` is the divergence of what it reported while decoding (or
verifying, with speculation) from its own prefill re-score of the same tokens. A candidate's is
judged against the band the baseline's own figure and the A/A's set (``stats.parity_verdict``
with the policy's ``parity:`` block), so a verify-path bug that prefill parity cannot see
(prefill kernels agree, the verify kernel does not) is NO-GO here. Paired as the prefill check
is (``parity_checks.paired_source``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.report.judge.check_kinds import DECODE_PARITY
from pipeline.report.judge.parity_checks import (
    band_pool,
    paired_source,
    same_folder,
    summaries_of,
)
from pipeline.report.judge.parity_numbers import DecodeParityNumbers
from pipeline.report.judge.verdicts import ERROR, INCONCLUSIVE, NO_BASELINE, Check, make_check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.parity_files import (
    DECODE,
    ParityFileError,
    ParitySummary,
    read_parity_summary,
)
from pipeline.report.load.tolerance import Tolerance
from pipeline.stats.parity_verdict import ClusteredMean, judge


def _decode(cell: CellRecord | None, metric: str, confidence: float) -> ClusteredMean | None:
    if cell is None or cell.folder is None:
        return None
    found = read_parity_summary(cell.folder, DECODE)
    return found.mean(metric, confidence) if found is not None else None


def decode_checks(
    cells: Sequence[CellRecord], pool: Sequence[CellRecord], tol: Tolerance
) -> list[Check]:
    """One check per cell under test that wrote ``decode.json`` and re-scored a baseline's."""
    found = summaries_of([*cells, *pool])
    noise = band_pool(cells, pool)
    out = []
    for cell in cells:
        summary = found.get(cell.id)
        if not isinstance(summary, ParitySummary) or cell.folder is None:
            continue
        try:
            check = _check(cell, summary, (pool, noise), found, tol)
        except ParityFileError as err:
            check = make_check(cell, None, DECODE_PARITY, ERROR, str(err))
        if check is not None:
            out.append(check)
    return out


def _aa(
    summary: ParitySummary,
    pool: Sequence[CellRecord],
    found: dict[str, ParitySummary | ParityFileError],
    variant: str,
) -> CellRecord | None:
    for other in pool:
        theirs = found.get(other.id)
        mine = isinstance(theirs, ParitySummary) and same_folder(theirs.source, summary.source)
        if other.variant == variant and mine:
            return other
    return None


def _check(
    cell: CellRecord,
    summary: ParitySummary,
    pools: tuple[Sequence[CellRecord], Sequence[CellRecord]],  # the baselines', the band's
    found: dict[str, ParitySummary | ParityFileError],
    tol: Tolerance,
) -> Check | None:
    policy = tol.parity
    pool, noise_pool = pools
    mine = _decode(cell, policy.metric, policy.confidence)
    if mine is None:  # parity.decode_path=false
        return None
    base, how = paired_source(cell, summary, pool, tol)
    if base is None:
        return make_check(cell, None, DECODE_PARITY, NO_BASELINE, how)
    noise = _decode(base, policy.metric, policy.confidence)
    if noise is None:
        why = f"{base.label} wrote no parity/decode.json: no band for the decode path"
        return make_check(cell, None, DECODE_PARITY, INCONCLUSIVE, why)
    aa_cell = _aa(summary, noise_pool, found, policy.aa_variant)
    aa = _decode(aa_cell, policy.metric, policy.confidence)
    verdict = judge(policy.verdict_rule, mine, noise, aa)
    band = verdict.band
    who = aa_cell.label if band.source == "reference" and aa_cell else base.label
    why = f"{policy.noise_factor:g} x the upper bound of {who}'s own decode-vs-prefill"
    why = {"ceiling": f"the policy's ceiling {policy.ceiling:g}",
           "floor": f"the policy's floor {policy.floor:g}"}.get(band.source, why)  # fmt: skip
    numbers = DecodeParityNumbers(
        metric=policy.metric,
        divergence=mine.estimate,
        lower=mine.lower,
        upper=mine.upper,
        se=mine.se,
        questions=mine.questions,
        tokens=mine.tokens,
        confidence=policy.confidence,
        band=band.limit,
        band_source=band.source,
        band_why=why,
        baseline_cell=base.label,
        paired_by=how,
        baseline_upper=noise.upper,
        aa_upper=aa.upper if aa else None,
    )
    message = f"decode vs own prefill: {verdict.reason}"
    return make_check(cell, None, DECODE_PARITY, verdict.verdict, message, numbers)
