import json

import pytest

from pipeline.measuring.sequential_run import (
    SequentialConf,
    design_of,
    find_baseline,
    look,
    paired_diffs,
    rounds,
)
from pipeline.results.baseline_choice import key_of_result
from pipeline.results.result_types import CellResult


def rec(qid, repeat, correct, error=None):
    return {"question_id": qid, "repeat": repeat, "correct": correct, "error_kind": error}


def test_rounds_split_by_repeat_index():
    design = design_of(SequentialConf(max_repeats=6, repeats_per_round=2))
    prompts = [(q, r) for q in "ab" for r in range(6)]
    split = rounds(prompts, lambda p: p[1], design)
    assert [sorted({r for _, r in group}) for group in split] == [[0, 1], [2, 3], [4, 5]]


def test_paired_diffs_use_pairs_both_sides_answered():
    cand = [rec("a", 0, True), rec("a", 1, False), rec("b", 0, True, error="timeout")]
    base = [rec("a", 0, False), rec("a", 1, False), rec("b", 0, True), rec("c", 0, True)]
    assert paired_diffs(cand, base) == {"a": [1.0, 0.0]}


@pytest.mark.parametrize(("drop_every", "expected"), [(None, "GO"), (4, "NO-GO")])
def test_look_decides_clear_cases_early(drop_every, expected):
    design = design_of(SequentialConf(max_repeats=16, repeats_per_round=8, margin=0.02))
    base = [rec(f"q{i}", r, i % 3 != 0) for i in range(400) for r in range(8)]
    cand = [dict(r) for r in base]
    if drop_every:
        for j, r in enumerate(cand):
            if r["correct"] and j % drop_every == 0:
                r["correct"] = False  # about a 17-point drop
    assert look(cand, base, design, 1) == expected


def test_look_continues_without_pairs():
    design = design_of(SequentialConf())
    assert look([rec("a", 0, True)], [], design, 1) is None


def test_find_baseline_matches_everything_but_the_variant(tmp_path):
    cell = {
        "model": "m",
        "kv_dtype": "auto",
        "skip_softmax": {},
        "speculative": {},
        "variant": "fmha_v2",
        "gpu": {"name": "H200"},
    }
    for name, variant, kv in [
        ("0_base", "fa3", "auto"),
        ("1_other_kv", "fa3", "fp8_e4m3"),
        ("2_me", "fmha_v2", "auto"),
    ]:
        (tmp_path / name).mkdir()
        other = {**cell, "variant": variant, "kv_dtype": kv}
        (tmp_path / name / "result.json").write_text(json.dumps({"status": "ok", "cell": other}))
    me = key_of_result(CellResult.from_json({"cell": cell}), tmp_path / "2_me")
    choice = find_baseline(tmp_path / "2_me", me, SequentialConf())
    assert choice.chosen is not None and choice.chosen.folder == str(tmp_path / "0_base")
    assert not choice.elsewhere
