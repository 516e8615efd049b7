"""An undecided accuracy check always says why, and what to raise ("why undecided" was empty).

The skip sweep's fmha_v2 cells at the default 2 repeats of the 58-question sample were
INCONCLUSIVE with nothing in the column: their bounds straddled the margin, and no rule said so.
"""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.report.judge.check_kinds import KINDS
from pipeline.report.judge.check_numbers import UNSET, Unset
from pipeline.report.judge.describe import spread_note
from pipeline.report.judge.verdicts import INCONCLUSIVE, Check, finalize
from pipeline.stats.power import VarianceComponents
from tests.helpers.check_numbers import accuracy_numbers, dependence

# The README's skip sweep: 58 questions x 2 repeats, bounds [-1.44, 2.18] pts on a 2-pt margin.
SAMPLE: dict[str, Any] = {"n_questions": 58, "repeats": 2, "nogo_bound": -0.0144,
                          "go_bound": 0.0218,
                          "dependence": dependence(questions_needed=174)}  # fmt: skip
STRADDLE = "its one-sided bounds [-1.44, 2.18] pts straddle the 2.00-pt margin: 58 questions x 2"


@pytest.mark.parametrize(
    ("given", "extra", "says"),
    [
        ({}, None, [STRADDLE, "more repeats would not decide it, about 174 questions would",
                    "or a wider margin (the policy's max_drop)"]),
        ({}, 6, [STRADDLE, "raise the repeats to about 8 (evals.mcq_sample.repeats=8)",
                 "or about 174 questions"]),
        ({}, 120, [STRADDLE, "more repeats would not decide it"]),  # almost on the margin
        ({}, UNSET, [STRADDLE, "more questions or repeats narrow it"]),  # not sized
        ({"dependence": UNSET}, None, ["more questions would"]),
        ({"repeats": 1}, None, ["58 questions x 1 repeat are too few"]),
        # a lower bound past the margin that the correction across cells did not let be NO-GO
        ({"nogo_bound": 0.025, "go_bound": 0.05}, None,
         ["clear the 2.00-pt margin at the plain level", "Holm across cells"]),
    ],
)  # fmt: skip
def test_the_note_says_why_and_what_to_raise(
    given: dict[str, Any], extra: int | Unset | None, says: list[str]
) -> None:
    note = spread_note(accuracy_numbers(**(SAMPLE | given)), extra, "mcq_sample")
    for text in says:
        assert text in note, note


def _undecided(components: VarianceComponents | None, **given: Any) -> Check:
    c = Check("id", "label", "mcq_sample", KINDS["accuracy_vs_baseline"], INCONCLUSIVE,
              numbers=accuracy_numbers(**(SAMPLE | given)))  # fmt: skip
    c.p_go, c.p_nogo, c.level = 0.0651, 1.0, 0.05
    c.components, c.distance = components, 0.02
    return c


@pytest.mark.parametrize(
    ("components", "given", "says"),
    [
        (VarianceComponents(0.1, 0.0, 200), {}, "evals.mcq_sample.repeats="),  # sized by repeats
        (VarianceComponents(0.1, 0.05, 200), {}, "more repeats would not decide it"),
        (None, {}, "more questions or repeats narrow it"),  # pairs not by repeat: not sized
        (None, {"undecided_because": "errors decided it"}, "errors decided it"),  # kept
        # greedy copies: the copies note, not this one
        (None, {"dependence": dependence(repeats_vary=False, questions_needed=174)},
         "repeats are copies"),
    ],
)  # fmt: skip
def test_finalize_fills_every_undecided_accuracy_check(
    components: VarianceComponents | None, given: dict[str, Any], says: str
) -> None:
    check = _undecided(components, **given)
    finalize([check], 0.05, 0.8, "holm")
    assert check.verdict == INCONCLUSIVE
    why = getattr(check.numbers, "undecided_because", "")
    assert says in why, why
