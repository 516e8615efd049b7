"""Whether a write-up quotes a table's figures: the facts, not the wording or the layout.

The tests that hold the READMEs to the committed live results used to look for each printed
Markdown row verbatim, so a reworded label, a moved column or bold type failed them (issue 38).
What they need is that the facts match: a row is quoted when one line of the text carries all
of the row's figures and verdicts in the row's order, whatever stands around them.
"""

from __future__ import annotations

import re

# A figure (0.62, 1,024, 0.5.19, 1e+06, 35.0%, -2.1; a label's digits, as in bf16, count too)
# or a verdict.
FACT = re.compile(
    r"\bNO-GO\b|\bGO\b|\bINCONCLUSIVE\b|[-+]?\d+(?:,\d{3})*(?:\.\d+)*(?:e[-+]?\d+)?%?"
)


def figures(text: str) -> list[str]:
    """The figures and verdicts of ``text``, in order."""
    return FACT.findall(text)


def _in_order(wanted: list[str], found: list[str]) -> bool:
    rest = iter(found)
    return all(any(f == w for f in rest) for w in wanted)


def quotes(text: str, row: str) -> bool:
    """Whether one line of ``text`` carries every figure and verdict of ``row``, in order."""
    wanted = figures(row)
    assert wanted, f"no figures in {row!r}: nothing to look for"
    return any(_in_order(wanted, figures(line)) for line in text.splitlines())


def unquoted(text: str, rows: list[str]) -> list[str]:
    """The table rows (header and rule lines skipped) whose facts ``text`` does not carry."""
    table = [r for r in rows if r.startswith("|") and "---" not in r and figures(r)]
    return [r for r in table if not quotes(text, r)]
