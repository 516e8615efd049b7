"""One alpha for a cell's NO-GO checks (pipeline.stats.nogo_split), as looks and report read it."""

import numpy as np
import pytest

from pipeline.config.schema import SequentialConf
from pipeline.measuring.sequential_run import design_of
from pipeline.stats.nogo_split import BROKEN_SHARE, nogo_shares, on_family_scale
from pipeline.stats.sequential import SequentialDesign


@pytest.mark.parametrize(("share", "expected"), [
    (0.2, (0.8, 0.2)), (0.5, (0.5, 0.5)), (None, (1.0, 1.0)),  # None: written before the split
])  # fmt: skip
def test_the_shares_of_nogo_alpha_sum_to_one(share, expected):
    assert nogo_shares(share) == pytest.approx(expected)


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, 1.5])
def test_a_share_outside_zero_one_is_refused_by_name(share):
    with pytest.raises(ValueError, match="broken_share"):
        nogo_shares(share)
    with pytest.raises(ValueError, match="broken_share"):
        SequentialDesign(32, 2, broken_share=share)


@pytest.mark.parametrize(("p", "share", "expected"), [
    (0.01, 0.2, 0.05), (0.04, 0.8, 0.05), (0.5, 0.2, 1.0), (np.nan, 0.2, np.nan),
])  # fmt: skip
def test_a_members_p_value_on_the_familys_scale(p, share, expected):
    np.testing.assert_allclose(on_family_scale(p, share), expected)


def test_new_anytime_cells_store_the_split_group_sequential_ones_do_not():
    assert design_of(SequentialConf()).broken_share == BROKEN_SHARE
    assert design_of(SequentialConf(statistic="group_sequential")).broken_share is None


@pytest.mark.parametrize(("look", "expected"), [
    (None, (0.8, 0.2)),  # a fixed-design cell: today's split
    ((SequentialDesign(32, 2, statistic="eprocess", broken_share=0.2), 3), (0.8, 0.2)),
    ((SequentialDesign(32, 2, statistic="eprocess"), 3), (1.0, 1.0)),  # written before it
    ((SequentialDesign(16, 2, statistic="null"), 3), (1.0, 1.0)),  # group-sequential
])  # fmt: skip
def test_the_report_reads_a_cell_with_the_split_it_ran_with(look, expected):
    from pipeline.report.judge.stopped_cells import nogo_split_of

    assert nogo_split_of(look) == pytest.approx(expected)


@pytest.mark.parametrize(("p_nogo_answered", "nogo_alpha", "decided"), [
    (0.045, 0.05, True),  # NO-GO at alpha on answered pairs alone
    (0.045, 0.04, False),  # not at the mean test's share: errors did not decide it
    (0.035, 0.04, True),
])  # fmt: skip
def test_errors_decided_reads_no_go_at_the_mean_tests_share(p_nogo_answered, nogo_alpha, decided):
    from pipeline.report.judge.versus_baseline import errors_decided
    from pipeline.stats.signoff import Evidence

    one, nan = np.asarray(1.0), np.asarray(np.nan)
    ev = Evidence(
        drop=np.asarray(0.04), se=np.asarray(0.01), df=np.asarray(197.0), n_paired=np.asarray(198),
        n_unanswered=np.asarray(0), n_absent=np.asarray(0), n_lost=np.asarray(30.0),
        margin_go=np.asarray(0.02), margin_nogo=np.asarray(0.02), worst_shift=np.asarray(0.0),
        p_go=one, p_nogo=np.asarray(0.2), p_go_answered=one,
        p_nogo_answered=np.asarray(p_nogo_answered), p_go_paired=one, p_nogo_paired=one,
        go_bound=nan, nogo_bound=np.asarray(0.015),
    )  # fmt: skip
    assert bool(errors_decided(ev, 0.05, nogo_alpha)) is decided
