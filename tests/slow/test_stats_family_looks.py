"""A sequential candidate's NO-GO read at the family's share of alpha, on the design of an
8-candidate sweep (24 repeats, rounds of 2): its boundaries take about 20 s to compute on the
2-core machine, so these live in the slow tier (moved from tests/unit/test_stats_family.py)."""

import numpy as np
import pytest

from benchmarks.signoff_sim.release_sim import Condition, run_condition
from pipeline.stats.release import family_pvalues, family_verdicts
from pipeline.stats.sequential import SequentialDesign, level_at
from pipeline.stats.sequential_pvalues import stagewise
from pipeline.stats.signoff import look_levels

pytestmark = pytest.mark.slow
SEQ = SequentialDesign(24, 2, 0.05, 0.02, family=8, statistic="null")


def test_no_go_is_read_at_the_familys_share_go_at_alpha():
    go, broken, nogo = look_levels(SEQ, 12)
    assert go == pytest.approx(level_at(SequentialDesign(24, 2, 0.05, 0.02), 12))
    assert nogo == pytest.approx(level_at(SequentialDesign(24, 2, 0.05 / 8, 0.02), 12))
    assert broken < nogo < go


@pytest.mark.parametrize("look", [1, 3, 12])
def test_a_stopped_no_go_is_reported_no_go_whatever_the_others_say(look):
    # Its look crossed NO-GO's boundary at alpha / 8: Bonferroni by 8 reads it <= alpha; Holm
    # on the stagewise p-values did not (the floor of a stagewise p is the alpha already spent).
    nogo_design = SEQ.side(False)
    p_look = 0.999 * level_at(nogo_design, look)
    p_stop = float(stagewise(nogo_design, look, np.asarray(p_look)))
    p = np.array([p_stop, *[0.9] * 7])
    _, adjusted = family_pvalues(np.full(8, np.nan), p, 1.0, True, np.full(8, 8))
    assert family_verdicts(np.full(8, np.nan), adjusted, 0.05)[0] == "NO-GO"
    _, holm = family_pvalues(np.full(8, np.nan), p, 1.0, True)
    assert family_verdicts(np.full(8, np.nan), holm, 0.05)[0] == "NO-GO" or look > 1


def test_every_candidate_that_stopped_no_go_is_reported_no_go():
    c = Condition(0.05, "uncertain", candidates=8, design=SequentialDesign(24, 2, 0.05, 0.02))
    o = run_condition(c, 16, 7)
    stopped = o.alone == "NO-GO"
    assert stopped.mean() > 0.8
    assert (o.first[stopped] == "NO-GO").all() and (o.release[stopped] == "NO-GO").all()
