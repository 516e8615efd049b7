"""The HTML report's "Questions that changed" view and the banner's failing checks.

Per candidate and eval compared with the baseline, the questions whose correctness moved most
(``changed_questions``): the question, its options and right answer, each repeat's answer on
either side, and the responses folded in a ``<details>`` so that the page stays short
(``question_cells``). Each view's anchor is ``tables.questions_anchor``,
which the verdict of the accuracy table links to.
"""

from __future__ import annotations

import html

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import ACCURACY_VS_BASELINE
from pipeline.report.judge.drop_numbers import AccuracyVsBaselineNumbers
from pipeline.report.judge.verdicts import FAILING, UNDECIDED, Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.samples import SampleError, read_samples
from pipeline.report.write.changed_questions import changed_questions
from pipeline.report.write.question_cells import HEADERS, STYLE, question_rows
from pipeline.report.write.section import sort_key
from pipeline.report.write.tables import questions_anchor

LIMIT = 20  # questions per candidate and eval: the ones that moved most
SHOWN = 5  # failing checks the banner names before "and N more"


def failing_checks(report: Report) -> list[Check]:
    """The checks that make the verdict what it is: failing ones, else undecided ones."""
    for verdicts in (FAILING, UNDECIDED):
        found = [c for c in report.checks if c.verdict in verdicts]
        if found:
            by_id = {c.id: c for c in report.cells}
            return sorted(found, key=lambda c: (sort_key(by_id[c.cell_id]), c.eval or ""))
    return []


def banner_items(report: Report) -> str:
    """The banner's list: each failing (else undecided) cell and check, linked where it can be."""
    found = failing_checks(report)
    items = []
    compared = {questions_anchor(c) for c in _compared(report)}
    for check in found[:SHOWN]:
        what = f"{check.cell_label}: {check.title(report.tolerance.baseline)} {check.verdict}"
        anchor = questions_anchor(check)
        link = f' (<a href="#{anchor}">questions that changed</a>)' if anchor in compared else ""
        items.append(f"<li>{html.escape(what)}{link}</li>")
    if len(found) > SHOWN:
        items.append(f"<li>and {len(found) - SHOWN} more (see the tables below)</li>")
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _compared(report: Report) -> list[Check]:
    return [
        c
        for c in report.checks
        if c.kind == ACCURACY_VS_BASELINE and isinstance(c.numbers, AccuracyVsBaselineNumbers)
    ]


def questions_section(report: Report) -> str:
    """The whole view: one part per candidate and eval compared with the baseline."""
    checks = _compared(report)
    if not checks:
        return ""
    by_folder = {str(c.folder or c.id): c for c in report.cells}
    by_id = {c.id: c for c in report.cells}
    checks.sort(key=lambda c: (sort_key(by_id[c.cell_id]), c.eval or ""))
    parts = [_part(c, by_id[c.cell_id], by_folder.get(_folder(c))) for c in checks]
    intro = (
        f"Per candidate and eval, the {LIMIT} questions at most whose share of correct repeats "
        "moved most between the baseline and the candidate, one row per repeat with both "
        "sides' answers; open a long question, or a response, to read it whole."
    )
    return (
        f'<style>{STYLE}</style><h2 id="changed-questions">Questions that changed</h2>'
        f"<p>{intro}</p>{''.join(parts)}"
    )


def _folder(check: Check) -> str:
    # The baseline folder of a compared check (``_compared`` keeps only those).
    assert isinstance(check.numbers, AccuracyVsBaselineNumbers)
    return check.numbers.baseline_folder


def _part(check: Check, cell: CellRecord, base: CellRecord | None) -> str:
    name = str(check.eval)
    head = (
        f'<h3 id="{questions_anchor(check)}">{html.escape(cell.label)}: {html.escape(name)} vs '
        f"{html.escape(base.label if base else _folder(check))} "
        f"({html.escape(check.verdict)})</h3>"
    )
    if base is None or base.folder is None or cell.folder is None:
        return head + "<p>The baseline's samples are not among the inputs.</p>"
    try:
        found = changed_questions(
            read_samples(base.folder, name), read_samples(cell.folder, name), LIMIT
        )
    except SampleError as err:
        return head + f"<p>Samples unreadable: {html.escape(str(err))}</p>"
    if not found:
        return head + "<p>No question's correctness moved.</p>"
    rows = "".join(question_rows(q) for q in found)
    headers = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    note = _no_text_note(name) if any(q.question is None for q in found) else ""
    return f'{head}{note}<table class="changed"><tr>{headers}</tr>{rows}</table>'


def _no_text_note(eval_name: str) -> str:
    # Samples written before the runner recorded each question's text (or by a harness that
    # gave none): the reader still gets the id to join on, and how to get the text next time.
    return (
        '<p class="note">Some of these samples hold no question text (they were written before '
        "mtp-eval recorded it): such a question is shown by its hash id, the "
        f"<code>question_id</code> of <code>samples/{html.escape(eval_name)}.jsonl</code>. "
        "Re-run the cells to record the questions.</p>"
    )
