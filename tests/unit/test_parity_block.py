"""result.json's ``parity`` block read typed, and a worst sequence's JSON (issue 39 item 4)."""

from __future__ import annotations

from pipeline.report.load.parity_files import WorstSequence
from pipeline.results.parity_block import ParityBlock
from pipeline.results.result_types import CellResult

GATED = {
    "order": "first", "sequences": 16, "wall_s": 1.5, "rescore_s": 0.25,
    "gate": {"verdict": "NO-GO", "reason": "NO-GO: divergence 0.0067", "aa_cell": "/x/aa",
             "accuracy": "skipped", "skipped": {"gsm8k": 32, "mtbench": 1}},
}  # fmt: skip


def test_a_gated_block_reads_back_with_the_repeats_not_spent() -> None:
    result = CellResult.from_json({"status": "ok", "parity": GATED})
    block = result.parity
    assert block is not None and block.order == "first" and block.rescore_s == 0.25
    assert block.gate is not None and block.gate.stopped and block.gate.aa_cell == "/x/aa"
    assert block.gate.skipped_text() == "gsm8k 32 repeats, mtbench 1 repeat"
    assert result.to_json()["parity"] == GATED  # kept as written


def test_no_block_or_a_malformed_one_reads_as_none_never_as_made_up_numbers() -> None:
    assert CellResult.from_json({"status": "ok"}).parity is None
    assert ParityBlock.from_json("first") is None
    odd = ParityBlock.from_json({"wall_s": "slow", "rescore_s": float("nan"), "gate": 3})
    assert odd is not None and odd.order == "last"
    assert odd.wall_s is None and odd.rescore_s is None and odd.gate is None
    gate = ParityBlock.from_json({"gate": {"verdict": "GO", "skipped": {"a": "2"}}})
    assert gate is not None and gate.gate is not None
    assert not gate.gate.stopped and dict(gate.gate.skipped) == {}


def test_a_worst_sequence_names_its_question_only_where_known() -> None:
    plain = WorstSequence("p3", 16, 32, 0.01)
    assert plain.to_json() == {"question": "p3", "prompt_tokens": 16, "tokens": 32, "mean": 0.01}
    asked = WorstSequence("p3", 16, 32, 0.01, "gsm8k", "ab12").to_json()
    assert asked["eval"] == "gsm8k" and asked["question_id"] == "ab12"
