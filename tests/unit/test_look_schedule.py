"""Where the anytime design spends alpha: shares per look and check, and what doubling buys."""

import pytest

from pipeline.stats.look_schedule import (
    NOGO_LAST_SHARE,
    PLANNED_SHARE,
    LookSchedule,
)
from pipeline.stats.sequential import SequentialDesign

CHECKS = ("go", "nogo", "broken")


@pytest.mark.parametrize("looks", ["every", "doubling"])
@pytest.mark.parametrize(
    ("per_round", "planned"), [(2, 1), (2, 4), (2, 12), (2, 16), (1, 5), (4, 8)]
)
def test_each_checks_shares_sum_to_at_most_one_over_every_look_planned_or_not(
    looks, per_round, planned
):
    plan = LookSchedule(per_round, planned, looks)
    for check in CHECKS:
        shares = [getattr(plan, check)(j) for j in range(1, 5_000)]
        assert min(shares) >= 0 and sum(shares) <= 1 + 1e-12, check
        planned_part = sum(shares[:planned])
        # The broken check's reserve is spent at doubles of its settled look, in the plan or not.
        assert planned_part <= PLANNED_SHARE + 1e-12 or check == "broken"


@pytest.mark.parametrize(("per_round", "planned", "spends", "settled"), [
    (2, 16, [1, 2, 4, 8, 16], 4),  # rounds of 2 to 32: 2, 4, 8, 16, 32 repeats; broken at 8
    (2, 12, [1, 2, 4, 8, 12], 4),  # a plan's last look spends though 24 is no double
    (2, 1, [1], 1),  # greedy: one planned look takes it all
    (8, 4, [1, 2, 4], 1),  # rounds of 8: the first look already has 8 repeats
    (1, 5, [1, 2, 4, 5], 5),  # never 8 repeats: the plan's last look
])  # fmt: skip
def test_doubling_spends_at_the_looks_whose_repeats_double(per_round, planned, spends, settled):
    plan = LookSchedule(per_round, planned, "doubling")
    assert plan.spending_looks() == spends
    assert plan.settled_look() == settled
    assert [j for j in range(1, planned + 1) if plan.go(j) > 0] == spends
    assert [j for j in range(1, planned + 1) if plan.broken(j) > 0] == [settled] + [
        j
        for j in spends
        if j > settled and j % settled == 0 and (j // settled) & (j // settled - 1) == 0
    ]


def test_no_go_keeps_most_of_its_alpha_for_the_plans_last_look():
    plan = LookSchedule(2, 16, "doubling")
    assert plan.nogo(16) == NOGO_LAST_SHARE
    assert sum(plan.nogo(j) for j in range(1, 16)) == pytest.approx(PLANNED_SHARE - NOGO_LAST_SHARE)
    assert plan.go(16) < plan.nogo(16) and plan.go(1) > plan.nogo(1)
    assert LookSchedule(2, 1, "doubling").nogo(1) == PLANNED_SHARE


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"alpha_looks": "weekly"}, "alpha_looks"), ({"per_round": 0}, "per_round"),
])  # fmt: skip
def test_a_bad_schedule_names_its_key(kwargs, word):
    with pytest.raises(ValueError, match=word):
        LookSchedule(**{"per_round": 2, "planned": 4, **kwargs})
    if "alpha_looks" in kwargs:
        with pytest.raises(ValueError, match=word):
            SequentialDesign(32, 2, statistic="eprocess", alpha_looks="weekly")


def test_a_design_without_alpha_looks_reads_as_it_ran_every_look():
    old = SequentialDesign(32, 2, statistic="eprocess")
    assert old.schedule == LookSchedule(2, 16, "every")
    new = SequentialDesign(32, 2, statistic="eprocess", alpha_looks="doubling")
    assert new.schedule.alpha_looks == "doubling" and new.side(False).alpha_looks == "doubling"
