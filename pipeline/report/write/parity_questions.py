"""The questions view's parity part: the eval question behind each worst parity sequence.

With ``parity.prompts=eval:NAME`` each sequence's prompt is a question of eval NAME
(``sequences.jsonl`` names it); the Parity section's worst-sequence table links each such
sequence to its row here (``parity_tables.parity_anchor``): the question's text, options and
right answer as the baseline cell's samples recorded them, beside the divergence. A sequence
from random ids has no question, and no link.
"""

from __future__ import annotations

import html
from pathlib import Path

from pipeline.report.assemble.build import Report
from pipeline.report.judge.parity_numbers import ParityNumbers
from pipeline.report.load.parity_files import WorstSequence
from pipeline.report.load.samples import SampleError, read_samples
from pipeline.report.write.changed_questions import ChangedQuestion, question_of
from pipeline.report.write.parity_tables import parity_anchor, parity_checks
from pipeline.report.write.question_cells import STYLE, gold_cell, question_cell

HEADERS = ("cell", "sequence", "eval", "question", "right answer", "mean divergence")
INTRO = (
    "Each candidate's worst parity sequences whose prompt is an eval question "
    "(parity.prompts=eval:NAME), with the question as the baseline's samples recorded it."
)


def _asked(source: str, eval_name: str, question_id: str) -> ChangedQuestion:
    """The question as the source cell's samples recorded it (its id alone when they did not)."""
    try:
        samples = read_samples(Path(source), eval_name)
    except SampleError:
        samples = {}
    records = [r for (qid, _), r in sorted(samples.items()) if qid == question_id]
    shown = question_of(records)
    gold = shown.gold if shown is not None else None
    return ChangedQuestion(question_id, gold, (), (), shown)


def _row(label: str, numbers: ParityNumbers, entry: WorstSequence, anchor: str) -> str:
    asked = _asked(numbers.sequences_from, str(entry.eval), str(entry.question_id))
    cells = [html.escape(label), html.escape(entry.question), html.escape(str(entry.eval)),
             question_cell(asked), gold_cell(asked.gold), f"{entry.mean:.3g}"]  # fmt: skip
    return f'<tr id="{anchor}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def parity_questions_section(report: Report) -> str:
    """The part (empty when no worst sequence names a question)."""
    rows = []
    for cell, check in parity_checks(report):
        n = check.numbers
        if not isinstance(n, ParityNumbers):
            continue
        for entry in n.worst:
            if entry.question_id and entry.eval:
                rows.append(_row(cell.label, n, entry, parity_anchor(cell.id, entry.question)))
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    return (
        f'<style>{STYLE}</style><h2 id="parity-questions">Questions of the worst parity '
        f'sequences</h2><p>{html.escape(INTRO)}</p><table class="changed"><tr>{head}</tr>'
        f"{''.join(rows)}</table>"
    )
