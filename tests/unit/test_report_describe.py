"""The bounds a check's message shows are the ones its verdict reads."""

from __future__ import annotations

import pytest

from pipeline.report.judge.describe import drop_bounds
from tests.helpers.check_numbers import accuracy_numbers

# Identical answers on 58 questions x 2 repeats (live in test_server_checks before it moved to 4
# repeats): the answered pairs' observed SE gives +-1.44 pts, the SE where the null holds +-2.13,
# so the verdict is INCONCLUSIVE against a 2-point margin and the message must say 2.13.
BOUNDS = {"lower": -0.0144, "upper": 0.0144, "nogo_bound": -0.0213, "go_bound": 0.0213}


@pytest.mark.parametrize(
    ("lost", "want"),
    [(0, "[-2.13, 2.13]"), (3, "[-2.13, 2.13] with what has no answer counted right")],
)
def test_the_message_shows_the_verdicts_bounds(lost: int, want: str) -> None:
    shown = drop_bounds(accuracy_numbers(**BOUNDS, n_lost=lost))
    assert shown.startswith(want), shown
    if lost:
        assert shown.endswith("answered pairs alone [-1.44, 1.44]")
    else:
        assert shown == want
