"""A rule SGLang states without text of its own still says something: its detail.

``Finding.message`` stays SGLang's own text ("" for a silent rule: ``read_wheels.py`` finds every
other message in the wheel); the warning line, the refusal and the console read ``Finding.text``.
The fa3 cells of a skip sweep printed ``warning: no-effect: `` with nothing after it.
"""

from __future__ import annotations

import pytest

from backends.compat import Finding
from pipeline.cell.outcomes import unsupported
from pipeline.results.result_draft import ResultDraft
from tests.helpers.compat_cells import Cell

PREFILL_UNUSED = "the prefill backend of this cell does not read the prefill factor"


@pytest.mark.parametrize(
    ("message", "detail", "text"),
    [
        ("Max running requests is reset to 48", "queues", "Max running requests is reset to 48"),
        ("", PREFILL_UNUSED, PREFILL_UNUSED),  # SGLang says nothing: ours
        ("", "", ""),
    ],
)  # fmt: skip
def test_a_finding_says_sglangs_message_else_its_detail(message: str, detail: str, text: str):
    assert Finding("r", "no-effect", message, detail).text == text


@pytest.mark.parametrize(
    ("cell", "rule"),
    [
        (Cell("fa3", skip=(0.5, None)), "skip_softmax_prefill_unused"),  # the README's skip sweep
        (Cell("fa3", skip=(None, 0.5)), "skip_softmax_decode_unused"),
        (Cell(spec=("EAGLE", 2, 2, 6)), "spec_tree_draft_tokens_limit"),  # a silent reject
    ],
)
def test_every_silent_rule_a_cell_meets_has_text(cell: Cell, rule: str) -> None:
    (found,) = [f for f in cell.run() if f.rule == rule]
    assert found.message == "" and found.text == found.detail != ""


def test_a_silent_reject_refuses_the_cell_with_its_detail() -> None:
    (found,) = [f for f in Cell(spec=("EAGLE", 2, 2, 6)).run() if f.outcome == "reject"]
    draft = ResultDraft({"status": "planned", "error": None})
    unsupported(draft, [found])
    assert draft.error is not None and draft.error.message == found.detail
