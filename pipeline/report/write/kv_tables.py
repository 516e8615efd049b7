"""The KV-dtype comparison: one variant at several KV cache dtypes, with its parity divergence.

One table per variant (GPU, model, SGLang release, skip-softmax factors, layout, speculative
recipe; the baseline variant too: what fp8 KV does to it) that ran two KV dtypes or more, shown
only where one of them ran the parity phase against the baseline (issue 39 item 4): a row per
KV dtype with its accuracy verdict against the baseline and its logprob divergence against the
band, as the skip-softmax frontier has, and above it the KV dtypes inside the band.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.report.assemble.build import Report
from pipeline.report.judge.verdicts import GO, worst
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.frontier import accuracy_verdicts, variant_key
from pipeline.report.speed.frontier_parity import PARITY_KIND, Divergence, divergence_of
from pipeline.report.write.frontier_tables import parity_text
from pipeline.report.write.section import Section, skip_text

KV = 3  # the KV dtype's place in ``frontier.variant_key``
INTRO = (
    "Cells of one variant that differ only in the KV cache dtype. Accuracy verdict: the worst "
    "accuracy check against the baseline over the evals. Divergence: the cell's logprob parity "
    "against the baseline's own re-score of the same sequences (the policy's metric per token, "
    "its upper bound and the A/A band; parity_vs_baseline)."
)


def _groups(report: Report) -> list[tuple[tuple[str, ...], list[CellRecord]]]:
    """Cells by everything that names the variant but the KV dtype, two dtypes at least."""
    found: dict[tuple[str, ...], list[CellRecord]] = {}
    for cell in report.cells:
        key = variant_key(cell)
        found.setdefault((*key[:KV], *key[KV + 1 :], skip_text(cell)), []).append(cell)
    return [(k, v) for k, v in sorted(found.items()) if len({c.kv_dtype for c in v}) >= 2]


def _inside(rows: Sequence[tuple[CellRecord, Divergence | None]]) -> str:
    inside = sorted({c.kv_dtype for c, d in rows if d is not None and d.verdict == GO})
    if not inside:
        return "No KV dtype's logprob divergence is inside the parity band."
    return f"KV dtypes inside the parity band: {', '.join(inside)}."


def kv_sections(report: Report) -> list[Section]:
    """The KV-dtype comparison tables (none without a variant at two dtypes run with parity)."""
    out = []
    for key, cells in _groups(report):
        ordered = sorted(cells, key=lambda c: (c.kv_dtype, c.id))
        rows = [(c, divergence_of(report.checks_of(c))) for c in ordered]
        if not any(d is not None for _, d in rows):
            continue  # no parity: the tables before it say all there is
        gpu, model, variant, release = key[:4]
        title = f"KV dtype: {variant} on {model}, {gpu}, SGLang {release}, {key[-1]}"
        section = Section(
            title, ["KV dtype", "accuracy verdict", "divergence (parity)", "cell"],
            intro=f"{_inside(rows)} {INTRO}",
        )  # fmt: skip
        for cell, d in rows:
            section.rows.append([cell.kv_dtype, _accuracy(report, cell), parity_text(d),
                                 cell.label])  # fmt: skip
        out.append(section)
    return out


def _accuracy(report: Report, cell: CellRecord) -> str:
    checks = report.checks_of(cell)
    per_eval = accuracy_verdicts(checks)
    if per_eval:
        return worst(per_eval.values())
    return worst(c.verdict for c in checks if c.kind.name != PARITY_KIND)
