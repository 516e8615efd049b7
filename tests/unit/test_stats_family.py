"""One design for a sequential candidate's stopping rule and the report: NO-GO's alpha split over
the sweep's family before the first look, read back with the same split (the 8-candidate
design's looks, about 20 s of boundaries, are in tests/slow/test_stats_family_looks.py)."""

import numpy as np
import pytest

from pipeline.results.eval_block import SequentialBlock
from pipeline.stats.release import family_pvalues
from pipeline.stats.sequential import SequentialDesign


def test_cells_without_a_split_keep_holm():
    p = np.array([0.01, 0.02, 0.9])
    _, split = family_pvalues(np.full(3, np.nan), p, 1.0, True, np.array([1, 1, 1]))
    _, plain = family_pvalues(np.full(3, np.nan), p, 1.0, True)
    assert list(split) == list(plain)


def test_a_design_written_before_reads_as_it_stopped():
    old = SequentialBlock.from_json({"role": "candidate", "look": 2, "max_repeats": 8,
                                     "repeats_per_round": 2, "alpha": 0.05, "margin": 0.02,
                                     "spending": "obrien_fleming"})  # fmt: skip
    design = SequentialDesign(**old.design)
    assert design.family == 1 and design.statistic == "observed"
    with pytest.raises(ValueError, match="family"):
        SequentialDesign(8, 2, family=0)
