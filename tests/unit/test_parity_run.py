import json

import pytest

from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.parity_run import paired, summary

SEQ = [{"question": "p0", "prompt_ids": [1, 2], "output_ids": [3, 4]},
       {"question": "p1", "prompt_ids": [5], "output_ids": [6]}]  # fmt: skip
BASE = [{"question": "p0", "logprobs": [-1.0, -2.0], "top": [[[3, -1.0]], [[4, -2.0]]]},
        {"question": "p1", "logprobs": [-0.5], "top": [[[6, -0.5]]]}]  # fmt: skip
CAND = [{"question": "p0", "logprobs": [-1.5, -2.0], "top": [[[3, -1.5]], [[9, -1.0]]]},
        {"question": "p1", "logprobs": [-0.5], "top": [[[6, -0.5]]]}]  # fmt: skip


def test_summary_of_two_prompts_by_hand():
    out = summary(paired(SEQ, BASE, CAND), [0, 2], "base")
    absd = out["metrics"]["abs_delta"]
    assert absd["estimate"] == pytest.approx(0.5 / 3) and absd["questions"] == 2
    assert out["metrics"]["top1_disagree"]["estimate"] == pytest.approx(1 / 3)
    # prompt p0's tokens sit at positions 2 and 3, p1's at 1: bins [0, 2) and [2, ...)
    assert [b["abs_delta"]["tokens"] for b in out["bins"]] == [1, 2]
    json.dumps(out, allow_nan=False)  # no inf or NaN reaches the file


def test_one_prompt_has_no_bounds_but_still_a_file():
    out = summary(paired(SEQ[:1], BASE[:1], CAND[:1]), [0], "base")
    assert out["metrics"]["abs_delta"]["upper"] is None
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize(
    ("base", "cand"),
    [(BASE[:1], CAND), (BASE, CAND[::-1]), (BASE, [{**CAND[0], "question": "px"}, CAND[1]])],
)
def test_scores_of_other_sequences_are_refused(base, cand):
    with pytest.raises(MeasureError, match="not the same ones"):
        paired(SEQ, base, cand)
