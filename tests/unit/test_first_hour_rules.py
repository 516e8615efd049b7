"""Pure rules of the first hour: a group choice's options and did-you-mean, the help page's
groups, the resume's lines, and the one spelling of an exact skip-softmax factor in a name."""

from __future__ import annotations

import pytest

from pipeline.cli.help_text import MTP_EVAL, help_page, wants_help
from pipeline.config.group_choices import choice_problem, chosen_values, config_dirs
from pipeline.results.cell_paths import cell_name
from pipeline.results.resume import resumed_line, resuming_line
from pipeline.results.skip_factor import factor_text, parse_factor

BACKENDS = ["fa3", "fa3_repeat", "flashinfer", "fmha_v2", "fmha_v2_fi", "triton", "trtllm_mha"]


@pytest.mark.parametrize(
    ("value", "chosen"),
    [
        ("fa3", ["fa3"]),
        ("fa3,fmha_v2", ["fa3", "fmha_v2"]),
        ("[gpqa_diamond,mmlu]", ["gpqa_diamond", "mmlu"]),
        ("[mcq_sample],[gsm8k]", ["mcq_sample", "gsm8k"]),
        ("[]", []),
        ("null", []),
        ("choice(fa3,fmha_v2)", []),  # Hydra expands sweep functions itself
    ],
)
def test_the_choices_a_value_names(value, chosen):
    assert chosen_values(value) == chosen


@pytest.mark.parametrize(
    ("value", "guess"),
    [
        ("fmha2", "did you mean backend=fmha_v2?"),
        ("fa3,fmha_2", "did you mean backend=fmha_v2?"),
        ("fmha", "did you mean backend=fmha_v2 or backend=fmha_v2_fi?"),  # a prefix of both
        ("FA", "did you mean backend=fa3 or backend=fa3_repeat?"),
        ("xyzzy", None),
        ("fa3,fmha_v2", ""),
    ],
)
def test_an_unknown_choice_names_the_closest_and_every_choice(value, guess):
    problem = choice_problem("backend", value, BACKENDS)
    if guess == "":
        assert problem is None
        return
    assert problem is not None
    assert f"The choices of backend are: {', '.join(BACKENDS)}" in problem
    assert (guess in problem) if guess else "did you mean" not in problem


def test_a_config_dir_of_the_users_is_searched_too():
    argv = ["--config-dir", "/a", "--config-dir=/b", "-cd", "/c", "backend=fa3"]
    assert [str(p) for p in config_dirs(argv)[1:]] == ["/a", "/b", "/c"]


def test_the_help_page_lists_each_group_with_its_choices():
    page = help_page(MTP_EVAL, ["backend", "kv_dtype"])
    assert page.startswith(MTP_EVAL)
    assert "  backend         fa3, fa3_repeat, flashinfer, fmha_v2" in page
    assert "  kv_dtype        auto, bf16, fp8_e4m3, fp8_e5m2" in page
    assert wants_help(["-m", "--help"]) and wants_help(["-h"]) and not wants_help(["--hydra-help"])


@pytest.mark.parametrize(
    ("factor", "text"),
    [(None, "None"), (0, "None"), (0.0, "None"), ("null", "None"), ("None", "None"),
     ("0", "None"), ("0.0", "None"), (0.5, "0.5"), (1e4, "10000.0"), ("1e4", "10000.0"),
     (10000, "10000.0")],
)  # fmt: skip
def test_an_exact_factor_has_one_spelling(factor, text):
    parsed = parse_factor(factor, "skip_softmax.prefill")
    assert factor_text(parsed) == text
    assert cell_name("m", "v", "auto", parsed, None) == f"m/v/auto/sp={text}/sd=None"


@pytest.mark.parametrize("factor", [False, -1, "-0.5", "nan", "fast", [1.0]])
def test_a_factor_that_is_no_number_is_refused_naming_the_key(factor):
    with pytest.raises(ValueError, match=r"cell\.skip_softmax\.decode: .* write a number >= 0"):
        parse_factor(factor, "cell.skip_softmax.decode")


def test_the_resume_lines_count_what_was_kept():
    kept = "20 answered samples kept from samples/mcq_sample.jsonl, 96 of 116 left to ask"
    assert resuming_line("mcq_sample", 20, 96) == f"mcq_sample: resuming: {kept}"
    asked = "kept 3 answered samples of an earlier run, asked 7"
    assert resumed_line("gsm8k", 3, 10) == f"resumed: gsm8k {asked}"
