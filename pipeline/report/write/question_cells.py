"""One changed question as rows of the HTML "Questions that changed" table (pure).

A question takes one row per repeat: its text (folded when long), options and right answer span
them, and each row holds that repeat's answer on the baseline and on the candidate side by side,
each with its full response folded. Every text from a sample goes through ``html.escape``: a
model's reply or a dataset's question is data, never markup.
"""

from __future__ import annotations

import html

from pipeline.report.write.changed_questions import Answer, ChangedQuestion, Question, option_index

HEADERS = ("question", "gold", "repeat", "baseline", "candidate", "baseline right",
           "candidate right", "change")  # fmt: skip
FOLDED_OVER = 400  # characters of question and options shown unfolded; longer ones fold
SUMMARY_CHARS = 140  # of a folded question, shown in its summary
OPTION_CHARS = 80  # of the option an answer names, shown beside its letter
STYLE = (
    "table.changed tr.first td { border-top: 2px solid #888; }"
    " table.changed .qtext { white-space: pre-wrap; max-width: 40em; }"
    " table.changed li.gold { font-weight: bold; }"
    " table.changed .qid { color: #777; font-size: 0.85em; }"
    " table.changed td.right { background: #e8f5e9; }"
    " table.changed td.wrong { background: #ffebee; }"
    " table.changed td.num { white-space: nowrap; }"
)


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def question_rows(q: ChangedQuestion) -> str:
    """The table rows of one question: one per repeat either side answered."""
    base = {a.repeat: a for a in q.baseline}
    cand = {a.repeat: a for a in q.candidate}
    repeats = sorted(base.keys() | cand.keys())
    per_repeat_gold = len({a.gold for a in (*q.baseline, *q.candidate)}) > 1
    rows = []
    for index, repeat in enumerate(repeats):
        either = base.get(repeat) or cand[repeat]
        gold = either.gold if per_repeat_gold else None
        cells = [
            _repeat_cell(repeat, gold),
            answer_cell(q.question, base.get(repeat)),
            answer_cell(q.question, cand.get(repeat)),
        ]
        if index == 0:
            rows.append(f'<tr class="first">{_spanning(q, len(repeats), cells)}</tr>')
        else:
            rows.append(f"<tr>{''.join(cells)}</tr>")
    return "".join(rows)


def _spanning(q: ChangedQuestion, span: int, cells: list[str]) -> str:
    # The question's own cells span its repeats' rows: text and gold before, tallies after.
    tallies = (_right(q.baseline), _right(q.candidate), f"{100 * q.change:+.1f} pts")
    before = (
        f'<td rowspan="{span}">{question_cell(q)}</td><td rowspan="{span}">{gold_cell(q.gold)}</td>'
    )
    after = "".join(f'<td rowspan="{span}" class="num">{html.escape(t)}</td>' for t in tallies)
    return before + "".join(cells) + after


def _repeat_cell(repeat: int, gold: str | None) -> str:
    # A shuffled question's right letter differs by repeat: said beside each repeat.
    said = f"<br><small>gold {html.escape(gold)}</small>" if gold is not None else ""
    return f"<td>{repeat}{said}</td>"


def question_cell(q: ChangedQuestion) -> str:
    """The question's text and options (folded when long) over its id; the id alone if unknown."""
    ident = f'<div class="qid">id <code>{html.escape(q.question_id)}</code></div>'
    shown = q.question
    if shown is None:
        return ident
    body = f'<div class="qtext">{html.escape(shown.text)}</div>{_options(shown, q)}'
    if len(shown.text) + sum(len(o) for o in shown.options) > FOLDED_OVER:
        summary = html.escape(shorten(shown.text, SUMMARY_CHARS))
        body = f"<details><summary>{summary}</summary>{body}</details>"
    return body + ident


def gold_cell(gold: str | None) -> str:
    """The right answer (a long one, e.g. a worked solution, folded)."""
    if gold is None:
        return ""
    if len(gold) <= OPTION_CHARS:
        return html.escape(gold)
    summary = html.escape(shorten(gold, OPTION_CHARS // 2))
    return f"<details><summary>{summary}</summary><pre>{html.escape(gold)}</pre></details>"


def _options(shown: Question, q: ChangedQuestion) -> str:
    if not shown.options:
        return ""
    gold = _gold_option(shown, (*q.baseline, *q.candidate))
    items = "".join(
        f'<li class="gold">{html.escape(text)} ✓</li>' if i == gold
        else f"<li>{html.escape(text)}</li>"
        for i, text in enumerate(shown.options)
    )  # fmt: skip
    if shown.permuted:  # letters differ by repeat: the answers name each option beside them
        return f'<ul title="options, shuffled per repeat">{items}</ul>'
    return f'<ol type="A">{items}</ol>'


def _gold_option(shown: Question, answers: tuple[Answer, ...]) -> int | None:
    for answer in answers:
        found = option_index(shown, answer.gold, answer)
        if found is not None:
            return found
    return None


def answer_cell(shown: Question | None, answer: Answer | None) -> str:
    """One side's answer at one repeat: letter or number, the option it names, the response."""
    if answer is None:
        return "<td>(not asked)</td>"
    said = html.escape(answer.extracted) if answer.extracted is not None else "no answer"
    option = option_index(shown, answer.extracted, answer)
    if shown is not None and option is not None:
        said += f" = {html.escape(shorten(shown.options[option], OPTION_CHARS))}"
    why = [w for w in (answer.error_kind, "truncated" if answer.finish_reason == "length" else None)
           if w]  # fmt: skip
    note = f" <small>({html.escape(', '.join(why))})</small>" if why else ""
    text = answer.response if answer.response is not None else "(no response)"
    folded = f"<pre>{html.escape(text)}</pre>"
    if answer.reasoning:
        folded = f"<p>reasoning:</p><pre>{html.escape(answer.reasoning)}</pre><p>reply:</p>{folded}"
    mark, kind = ("✓", "right") if answer.correct else ("✗", "wrong")
    return (
        f'<td class="{kind}"><b>{said}</b> {mark}{note}'
        f"<details><summary>response</summary>{folded}</details></td>"
    )


def _right(answers: tuple[Answer, ...]) -> str:
    return f"{sum(a.correct for a in answers)}/{len(answers)}"
