from __future__ import annotations

import pytest

from evals.grading import extract_mcq_letter, extract_number, normalize_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: B", "B"),
        ("answer:C", "C"),
        ("ANSWER :  D", "D"),
        ("**Answer:** A", "A"),
        ("**Answer**: C", "C"),
        ("**Answer: D**", "D"),
        ("Answer: **B**", "B"),
        ("Answer: (C)", "C"),
        ("Answer: [A]", "A"),
        ("Answer: $B$", "B"),
        ("Answer: C) 4.2 eV", "C"),
        ("Answer: D.", "D"),
        ("*Final Answer:* _A_", "A"),
        (r"\boxed{C}", "C"),
        (r"so $\boxed{\text{B}}$", "B"),
        (r"\boxed{\textbf{(D)}}", "D"),
        (r"\boxed{ (A) }", "A"),
        (r"Answer: $\boxed{C}$", "C"),
        ("The final answer is B", "B"),
        ("The final answer is: **(D)**", "D"),
        ("Therefore the answer is (A).", "A"),
        # the last match in the text wins, whichever pattern finds it
        ("Answer: A\nOn reflection...\nAnswer: C", "C"),
        (r"\boxed{B} ... Answer: D", "D"),
        (r"Answer: D, or rather \boxed{A}", "A"),
        ("The final answer is B.\n\nAnswer: B", "B"),
        # no answer, or words that only look like one
        ("", None),
        ("I cannot decide.", None),
        ("Answer: Both options are wrong", None),
        ("Answer: Doubtful", None),
        ("Answer: E", None),
        ("answers: C", None),
        ("The answer is a mixture of B-type stars", None),
        (r"\boxed{4.2}", None),
        ("Answer: b", None),
    ],
)
def test_extract_mcq_letter(text: str, expected: str | None) -> None:
    assert extract_mcq_letter(text) == expected


@pytest.mark.parametrize(
    ("text", "letters", "expected"),
    [
        ("Answer: J", "ABCDEFGHIJ", "J"),
        ("Answer: J", "ABCD", None),
        (r"\boxed{G}", "ABCDEFGHIJ", "G"),
        ("Answer: C", "AB", None),
        ("Answer: C", "", None),
    ],
)
def test_letter_set_is_a_parameter(text: str, letters: str, expected: str | None) -> None:
    assert extract_mcq_letter(text, letters) == expected


def test_none_content_gives_none() -> None:
    assert extract_mcq_letter(None) is None and extract_number(None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She has 5 + 3 = 8 apples.\n#### 8", "8"),
        ("#### 1,234", "1234"),
        ("#### $42.00", "42"),
        ("The final answer is 1,234.", "1234"),
        ("The final answer is $\\boxed{72}$", "72"),
        ("Answer: -3", "-3"),
        ("Answer: 2.50", "2.5"),
        ("\\boxed{18}", "18"),
        ("12 eggs minus 3 is 9 eggs, times $2 is $18.", "18"),
        ("#### 7\nbut the final answer is 9", "9"),
        ("The final answer is 10 and 3 more... #### 4", "4"),
        ("no numbers here", None),
        ("", None),
        ("#### 0.0", "0"),
        ("#### -0", "0"),
        ("Answer: 100", "100"),
        ("Answer: 1,000,000", "1000000"),
    ],
)
def test_extract_number(text: str, expected: str | None) -> None:
    assert extract_number(text) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("$1,234.00", "1234"),
        ("+7", "7"),
        ("-0.50", "-0.5"),
        ("007", "7"),
        ("0.5", "0.5"),
        ("10.0", "10"),
        ("-", None),
        ("$", None),
    ],
)
def test_normalize_number(raw: str, expected: str | None) -> None:
    assert normalize_number(raw) == expected


def test_extraction_is_linear_on_long_adversarial_text() -> None:
    text = "Answer:" + " " * 200_000 + "x" + "\\boxed{" * 20_000
    assert extract_mcq_letter(text) is None
