"""A rule SGLang states without text of its own still says something: its detail.

``Finding.message`` stays SGLang's own text ("" for a silent rule: ``read_wheels.py`` finds every
other message in the wheel); the warning line, the refusal and the console read ``Finding.text``.
The fa3 cells of a skip sweep printed ``warning: no-effect: `` with nothing after it.
"""

from __future__ import annotations

from typing import Any

import pytest

from backends.compat import Finding
from pipeline.cell.outcomes import unsupported
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_types import CellResult
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


def _finding(outcome: str, message: str, detail: str) -> dict[str, Any]:
    return {"rule": "r", "outcome": outcome, "message": message, "detail": detail}


@pytest.mark.parametrize(
    ("warnings", "preflight", "printed"),
    [
        # a result written before Finding.text: the empty warning gets the rule's detail
        (["no-effect: "], [_finding("no-effect", "", PREFILL_UNUSED)],
         [f"no-effect: {PREFILL_UNUSED}"]),
        # SGLang's text is kept; only the silent one is filled, in order
        (["adjust: reset to 48", "no-effect: ", "no-effect: "],
         [_finding("adjust", "reset to 48", "queues"), _finding("no-effect", "", "first"),
          _finding("no-effect", "", "second")],
         ["adjust: reset to 48", "no-effect: first", "no-effect: second"]),
        # a result written since: as written
        ([f"no-effect: {PREFILL_UNUSED}"], [_finding("no-effect", "", PREFILL_UNUSED)],
         [f"no-effect: {PREFILL_UNUSED}"]),
        # nothing to fill it from: as written
        (["no-effect: "], [], ["no-effect: "]),
        (["adjust: x", "GPU h200 named, b200 run"], [], ["adjust: x", "GPU h200 named, b200 run"]),
    ],
)  # fmt: skip
def test_the_console_prints_a_silent_rules_detail(
    warnings: list[str], preflight: list[dict[str, Any]], printed: list[str]
) -> None:
    result = CellResult.from_json({"status": "ok", "warnings": warnings, "preflight": preflight})
    assert result.warning_lines() == printed
