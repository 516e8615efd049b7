"""What a report judged (pure): a gate that judged nothing does not say GO.

A check judges when it compares a cell with a baseline or a reference value (or a speed band) and
decides: GO, NO-GO, PASS or FAIL. A cell's status, an accept metric that is present, McNemar's
secondary test, a missing reference and the speed tables without a band judge nothing. A report
whose checks would all be GO / PASS / OK but none of them judged anything (speed-only cells with
no speed band, a baseline alone) exits 2, not 0, and lists what it did not judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pipeline.report.judge.check_kinds import (
    BROKEN_PROMPTS,
    PARITY_VS_BASELINE,
    SPEED_VS_BASELINE,
    STAT_KINDS,
    CheckKind,
)  # fmt: skip
from pipeline.report.judge.verdicts import (
    FAIL,
    GO,
    INFO,
    NO_GO,
    NO_REFERENCE,
    PASS,
    Check,
    exit_code,
)
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.band_checks import shape_name
from pipeline.report.speed.ratios import SpeedRow

JUDGING_KINDS: tuple[CheckKind, ...] = (
    *STAT_KINDS,
    BROKEN_PROMPTS,
    SPEED_VS_BASELINE,
    PARITY_VS_BASELINE,
)
DECIDED = (GO, NO_GO, PASS, FAIL)
NOTHING_JUDGED = "nothing was judged"
AA_NOT_JUDGED = (
    "its two starts make the A/A band, so no speed band judges them (the Speed tables show the "
    "ratio as 'the A/A itself')"
)
NO_SPEED_BAND = (
    "no speed band in the policy (conf/tolerance `speed:`): speed is informational, shown in the "
    "Speed tables, not judged"
)


def judged(checks: Iterable[Check]) -> bool:
    """Whether any check compared a cell with something and decided."""
    return any(c.kind in JUDGING_KINDS and c.verdict in DECIDED for c in checks)


def gate_exit_code(checks: Sequence[Check]) -> int:
    """``verdicts.exit_code``, except that a report which judged nothing exits 2, not 0."""
    code = exit_code(checks)
    return 2 if code == 0 and not judged(checks) else code


def not_judged(
    cells: Sequence[CellRecord],
    checks: Sequence[Check],
    speed: Sequence[SpeedRow],
    baseline: str,
    aa_controls: Sequence[str] = (),
) -> list[str]:
    """One line per thing the report measured but did not judge (empty: everything judged).

    ``aa_controls``: the labels of cells that are an A/A's second start in a speed or serving
    table (``restart_noise.same_engine``): no band judges them, and one line says why.
    """
    lines = []
    banded = {(c.cell_id, c.eval) for c in checks if c.kind == SPEED_VS_BASELINE}
    free = [r for r in speed if r.cell.variant != baseline and not r.aa_pair
            and (r.cell.id, shape_name(r)) not in banded]  # fmt: skip
    unbanded = sorted({r.cell.label for r in free})
    if unbanded:
        shapes = ", ".join(sorted({shape_name(r) for r in free}))
        why = NO_SPEED_BAND if not banded else f"no speed band for {shapes} in the policy"
        lines.append(f"speed of {len(unbanded)} candidate cell(s) ({', '.join(unbanded)}): {why}")
    controls = sorted(aa_controls)
    if controls:
        lines.append(f"speed of the A/A ({', '.join(controls)}): {AA_NOT_JUDGED}")
    anything = judged(checks)
    for cell in cells:
        mine = [c for c in checks if c.cell_id == cell.id]
        if cell.status != "ok" or any(_tried(c) for c in mine):
            continue
        if not cell.evals and cell.label in {*unbanded, *controls}:  # said once, above
            continue
        if cell.variant != baseline or not anything:  # a judged report's baseline is its yardstick
            lines.append(f"{cell.label}: no check judged it ({_why(cell, baseline)})")
    return lines


def _tried(check: Check) -> bool:
    # A comparison that ran, decided or not (an undecided one is named by its own verdict).
    return check.kind in JUDGING_KINDS and check.verdict not in (NO_REFERENCE, INFO)


def _why(cell: CellRecord, baseline: str) -> str:
    if not cell.evals:
        return "speed only, no eval to compare" if cell.result.speed else "no eval ran"
    if cell.variant == baseline:
        return f"the baseline ({baseline}), with no reference value to compare with"
    return "no comparison decided"
