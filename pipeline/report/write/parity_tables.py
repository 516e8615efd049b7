"""The Parity tables (issue 39): each ``parity_vs_baseline`` check as rows and entries.

Per candidate: the divergence, its bounds, top-1 agreement, the band and what set it, the
verdict; its mean per context-position bin (a divergence that only bites at long context); the
sequences furthest from the baseline. ``summary.json``'s ``parity`` list and ``cells.csv``'s
parity columns come from the same checks.
"""

from __future__ import annotations

from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import (
    DECODE_PARITY,
    LOSSLESS,
    PARITY_VS_BASELINE,
    CsvFields,
)
from pipeline.report.judge.check_numbers import LosslessNumbers, numbers_json
from pipeline.report.judge.parity_numbers import (
    DecodeParityNumbers,
    DivergenceNumbers,
    ParityNumbers,
    band_of,
)
from pipeline.report.judge.verdicts import Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.parity_files import WorstSequence
from pipeline.report.write.section import WHO, Section, sort_key, who

KINDS = (PARITY_VS_BASELINE, DECODE_PARITY)
PARITY_COLUMNS = [c for kind in KINDS for c in kind.columns]
PATH = {PARITY_VS_BASELINE.name: "prefill", DECODE_PARITY.name: "decode/verify"}
INTRO = (
    "Teacher-forced logprob parity: the baseline generated sequences at temperature 1; each "
    "candidate (and the A/A, a second start of the baseline) re-scored exactly those token ids "
    "by prefill. The divergence is the per-token mean of the policy's metric against the "
    "baseline's own re-score, clustered by sequence; GO when its upper bound lies inside the "
    "band (noise_factor x the A/A's or the reference pair's upper bound, within the policy's "
    "floor and ceiling), NO-GO when its lower bound lies beyond it. No sampling noise of the "
    "evals enters: a drift too small for the accuracy margin shows here. The decode/verify "
    "rows compare what each cell reported while decoding (verifying, with speculation) with its "
    "own prefill re-score of the same tokens, against the baseline's own such divergence: a "
    "verify-path bug shows there only."
)


def parity_checks(report: Report) -> list[tuple[CellRecord, Check]]:
    """Each cell's parity check, in the tables' order."""
    out = []
    for cell in sorted(report.cells, key=sort_key):
        out += [(cell, c) for c in report.checks_of(cell) if c.kind in KINDS]
    return out


def _g(value: Any) -> str:
    return "" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def _pct(value: Any) -> str:
    return "" if value is None else f"{100 * value:.2f}%"


def lossless_section(report: Report) -> list[Section]:
    """Greedy spec-on against spec-off per variant (none without a losslessness check)."""
    heads = ["spec-off cell", "requests", "exact match", "deterministic", "first divergence",
             "verdict"]  # fmt: skip
    section = Section("Parity: speculation on vs off (greedy)",
                      [*WHO.strip("|").split("|"), *heads])  # fmt: skip
    for cell in sorted(report.cells, key=sort_key):
        for check in (c for c in report.checks_of(cell) if c.kind == LOSSLESS):
            section.rows.append([*who(cell), *_lossless_row(check), check.verdict])
    return [section] if section.rows else []


def _lossless_row(check: Check) -> list[str]:
    # A losslessness check without numbers (refused, no spec-off cell) shows its message.
    n = check.numbers
    if not isinstance(n, LosslessNumbers):
        return [check.message, "", _pct(None), "", "-"]
    firsts = ", ".join(f"{q}@{p}" for q, p in n.first_divergence.items())
    return [n.spec_off_cell, str(n.requests), _pct(n.exact_match_rate), str(n.deterministic),
            firsts or "-"]  # fmt: skip


def parity_anchor(cell_id: str, question: str) -> str:
    """The HTML anchor of one worst sequence's question row."""
    raw = f"parity-{cell_id}-{question}"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in raw)


def link_worst(section: Section, cell_id: str, worst: list[WorstSequence]) -> None:
    """Link the rows ``worst`` just added to ``section`` to their questions (where asked)."""
    first = len(section.rows) - len(worst)
    for offset, entry in enumerate(worst):
        if entry.question_id:
            section.links[first + offset] = parity_anchor(cell_id, entry.question)


def parity_sections(report: Report) -> list[Section]:
    """The Parity table, its position bins and its worst sequences (none without checks)."""
    found = parity_checks(report)
    if not found:
        return lossless_section(report)
    cols = WHO.strip("|").split("|")
    heads = ["path", "metric", "divergence", "bounds", "top-1 agreement", "band", "verdict",
             "paired with"]  # fmt: skip
    main = Section("Parity", [*cols, *heads], intro=INTRO)
    bins = Section("Parity by context position", [*cols, "positions", "mean", "tokens"])
    worst_heads = ["sequence", "prompt tokens", "scored tokens", "mean"]
    worst = Section("Parity: worst sequences", [*cols, *worst_heads], link_column="sequence",
                    link_title="its question")  # fmt: skip
    for cell, check in found:
        main.rows.append([*who(cell), PATH[check.kind.name], *_main_row(check)])
        n = check.numbers
        if not isinstance(n, ParityNumbers):
            continue
        for b in n.bins:
            high = "" if b.high is None else b.high
            bins.rows.append([*who(cell), f"[{b.low}, {high})", _g(b.mean), str(b.tokens)])
        for w in n.worst:
            worst.rows.append([*who(cell), w.question, str(w.prompt_tokens), str(w.tokens),
                               _g(w.mean)])  # fmt: skip
        link_worst(worst, cell.id, n.worst)
    return [main, bins, worst, *lossless_section(report)]


def _main_row(check: Check) -> list[str]:
    # A parity check without numbers (no baseline, unreadable files) shows its message.
    n = check.numbers
    if not isinstance(n, DivergenceNumbers):
        return ["", _g(None), "", _pct(None), "none", check.verdict, check.message]
    band = band_of(n)
    shown = f"{_g(band[0])} ({band[2]})" if band else "none"
    top1 = n.top1_agreement if isinstance(n, ParityNumbers) else None
    who_with = n.baseline_cell if isinstance(n, ParityNumbers | DecodeParityNumbers) else ""
    return [n.metric, _g(n.divergence), f"[{_g(n.lower)}, {_g(n.upper)}]", _pct(top1), shown,
            check.verdict, who_with]  # fmt: skip


def parity_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``parity`` list: one entry per candidate's parity check."""
    return [
        {"cell": cell.id, "label": cell.label, "variant": cell.variant, "kv_dtype": cell.kv_dtype,
         "skip_softmax": {"prefill": cell.skip_prefill, "decode": cell.skip_decode},
         "path": PATH[check.kind.name], "verdict": check.verdict, **numbers_json(check.numbers)}
        for cell, check in parity_checks(report)
    ]  # fmt: skip


def parity_fields(checks: list[Check]) -> CsvFields:
    """A cell's ``cells.csv`` parity columns (empty without a parity check)."""
    out: CsvFields = {}
    for check in checks:
        if check.kind in KINDS:
            out |= check.kind.csv_fields(check)
    return out
