"""Issue 5 item 7: the sign-off rules meet the required error rates on GPQA-shaped data.

The requirements and the simulation are benchmarks/signoff_sim/requirements.py and
simulation.py, the same code benchmarks/signoff_rules_comparison.py prints; this test fails on
any requirement not met.
"""

from __future__ import annotations

import pytest

from benchmarks.signoff_sim.requirements import check, run_all
from benchmarks.signoff_sim.simulation import Setup, gpqa_like, one_repeat_sd

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcome():
    setup = Setup(reps=10000)
    return setup, check(run_all(gpqa_like(), setup), setup)


def test_benchmark_is_shaped_like_pr_32272():
    bench = gpqa_like()
    assert len(bench.p) == 198
    assert bench.p.mean() == pytest.approx(0.72, abs=0.005)
    assert one_repeat_sd(bench.p) == pytest.approx(0.015, abs=1e-4)
    assert bench.uncertain.sum() == pytest.approx(198 / 5, abs=1)


def test_every_requirement_is_met(outcome):
    _, reqs = outcome
    assert len(reqs) == 6 + 1 + 4 + 2 * 7
    failed = [
        f"{r.design}: {r.text} = {r.value:.4f}, needs {r.op} {r.bound}" for r in reqs if not r.met
    ]
    assert not failed, "\n".join(failed)
