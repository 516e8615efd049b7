"""The bounds a check's message shows are the ones its verdict reads."""

from __future__ import annotations

import pytest

from pipeline.report.judge.describe import drop_bounds

# Identical answers on 58 questions x 2 repeats (live in test_server_checks before it moved to 4
# repeats): the answered pairs' observed SE gives +-1.44 pts, the SE where the null holds +-2.13,
# so the verdict is INCONCLUSIVE against a 2-point margin and the message must say 2.13.
OBSERVED = {"lower": -0.0144, "upper": 0.0144}
NULL = {"nogo_bound": -0.0213, "go_bound": 0.0213}


@pytest.mark.parametrize(
    ("numbers", "want"),
    [
        ({**OBSERVED, **NULL}, "[-2.13, 2.13]"),
        ({**OBSERVED, **NULL, "n_lost": 3}, "[-2.13, 2.13] with what has no answer counted right"),
        (OBSERVED, "[-1.44, 1.44]"),  # a check written before the verdict's bounds existed
    ],
)
def test_the_message_shows_the_verdicts_bounds(numbers: dict, want: str) -> None:
    shown = drop_bounds(numbers)
    assert shown.startswith(want), shown
    if "n_lost" in numbers:
        assert shown.endswith("answered pairs alone [-1.44, 1.44]")
