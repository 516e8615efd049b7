import pytest

from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.parity_client import (
    generation_body,
    parse_generated,
    parse_rescored,
    scoring_body,
)


def test_scoring_body_starts_one_before_the_output():
    body = scoring_body([1, 2, 3], [7, 8], 5)
    assert body["input_ids"] == [1, 2, 3, 7, 8]
    assert body["logprob_start_len"] == 2  # entry 0 (id 3) is null, entries 1.. are 7 and 8
    assert body["sampling_params"]["max_new_tokens"] == 0
    assert body["return_logprob"] is True and body["top_logprobs_num"] == 5


def test_scoring_needs_a_prompt():
    with pytest.raises(ValueError, match="no ids"):
        scoring_body([], [1], 0)


def test_generation_body_keys():
    body = generation_body([4], 16, 1.0, 3)
    assert body == {
        "input_ids": [4],
        "sampling_params": {
            "max_new_tokens": 16,
            "temperature": 1.0,
            "top_p": 1.0,
            "top_k": -1,
            "min_p": 0.0,
            "repetition_penalty": 1.0,
        },
        "return_logprob": True,
        "top_logprobs_num": 3,
    }


SCORED = {
    "text": "",
    "output_ids": [],
    "meta_info": {
        "input_token_logprobs": [[None, 3, None], [-0.5, 7, None], [-1.5, 8, None]],
        "output_token_logprobs": [],
        "input_top_logprobs": [None, [[-0.5, 7, None], [-2.0, 9, None]], [[-0.2, 4, None]]],
    },
}


def test_parse_rescored_reads_the_input_lists_after_the_first_entry():
    out = parse_rescored([7, 8], SCORED)
    assert out.logprobs == (-0.5, -1.5)
    assert out.top == (((7, -0.5), (9, -2.0)), ((4, -0.2),))
    assert out.top1 == (7, 4)


def _with(meta_key, value):
    return {**SCORED, "meta_info": {**SCORED["meta_info"], meta_key: value}}


@pytest.mark.parametrize(
    ("answer", "ids", "match"),
    [
        ({"text": ""}, [7, 8], "without meta_info"),
        (SCORED, [7, 9], "not the 2 sent"),
        (_with("input_token_logprobs", [[None, 3], [None, 7], [-1.0, 8]]), [7, 8],
         "None where a logprob is"),
        (_with("input_token_logprobs", "x"), [7, 8], "not a list of"),
        (_with("input_top_logprobs", [None]), [7, 8], "does not have 3 rows"),
    ],
)  # fmt: skip
def test_bad_answers_name_the_key(answer, ids, match):
    with pytest.raises(MeasureError, match=match) as err:
        parse_rescored(ids, answer)
    assert err.value.kind == "parity"


def test_parse_generated_keeps_the_output_ids_and_checks_them():
    answer = {
        "output_ids": [5, 6],
        "meta_info": {"output_token_logprobs": [[-0.1, 5, None], [-0.3, 6, None]]},
    }
    out = parse_generated([1, 2], answer)
    assert out.output_ids == (5, 6) and out.decode.logprobs == (-0.1, -0.3)
    assert out.decode.top == ()
    with pytest.raises(MeasureError, match="output_ids differ"):
        parse_generated([1, 2], {**answer, "output_ids": [5, 7]})
