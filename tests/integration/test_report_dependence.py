"""Issue 37 through real ``mtp-eval-report`` runs on cell folders written in the on-disk format.

Greedy copies and sticky repeats: the report's verdicts agree with the simulation's
(``benchmarks/signoff_sim/dependence.py``, which decides through the report's own functions),
and the report says what a repeat is worth. A fixed-design cell rerun into its folder is read as
invalid, naming the earlier run.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks.signoff_sim.dependence import Dependent, decide, draw_pair
from tests.helpers.report_cells import records, run_report, write_cell, write_multirun

pytestmark = pytest.mark.integration
CONDITIONS = [
    Dependent("greedy"),  # two starts of one engine: 3.6% of answers flipped, repeats copies
    Dependent("greedy", drop=0.02),
    Dependent("copied", 0.8, drop=0.02),
    Dependent("copied", 0.8),
    Dependent("copied", 0.1, drop=0.05),
]


def write_pair(root: Path, base: np.ndarray, cand: np.ndarray) -> None:
    write_multirun(root, ["fmha_v2", "fa3"])
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(cand.astype(bool), accept=None),
               speculative=False)  # fmt: skip
    write_cell(root / "1_m_fa3", "fa3", records(base.astype(bool), accept=None), speculative=False)


def checks(summary: dict) -> dict[str, dict]:
    cell = next(c for c in summary["cells"] if c["variant"] == "fmha_v2")
    return {k["kind"]: k for k in cell["checks"]}


@pytest.mark.parametrize("condition", CONDITIONS, ids=repr)
def test_the_report_agrees_with_the_simulation_on_dependent_repeats(tmp_path, condition):
    rng = np.random.default_rng(37)
    base, cand = draw_pair(condition, rng, 3, 8)
    expected, _ = decide(condition, base, cand)
    for i in range(3):
        write_pair(tmp_path / f"m{i}", base[i], cand[i])
        _, summary = run_report([tmp_path / f"m{i}"], tmp_path / f"r{i}")
        found = checks(summary)
        acc, broken = found["accuracy_vs_baseline"], found["broken_prompts"]
        verdict = "NO-GO" if broken["verdict"] == "FAIL" else acc["verdict"]
        assert verdict == expected[i], (i, acc, broken)
        numbers = acc["numbers"]
        assert numbers["answers_per_side"] == base.shape[1] * base.shape[2]
        if condition.dependence == "greedy":  # copies: worth one answer per question
            assert numbers["repeats_vary"] is False and numbers["icc"] == 1.0
            assert numbers["effective_answers"] == pytest.approx(base.shape[1])


def test_the_report_shows_what_a_repeat_is_worth(tmp_path):
    rng = np.random.default_rng(1)
    base, cand = draw_pair(Dependent("greedy"), rng, 1, 8)
    write_pair(tmp_path / "m", base[0], cand[0])
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    text = (tmp_path / "r" / "report.md").read_text()
    assert "What a repeat is worth" in text and "nothing (copies: greedy)" in text
    needed = checks(summary)["accuracy_vs_baseline"]["numbers"]["questions_needed"]
    # (z_0.95 + z_0.8)^2 times the spread of the per-question differences over the margin^2:
    # about 560 questions at 3.6% of answers flipped between two starts.
    d = cand[0, :, 0] - base[0, :, 0]
    assert needed == math.ceil((2.4865 * d.std(ddof=1) / 0.02) ** 2) or d.std() == 0


@pytest.mark.parametrize(("aside", "invalid"), [
    ("samples.previous-0123456789abcdef", True),
    ("samples.previous-0123456789abcdef-misconfigured-0badc0de", False),
])  # fmt: skip
def test_a_fixed_cell_rerun_into_its_folder_is_invalid(tmp_path, aside, invalid):
    rng = np.random.default_rng(2)
    base, cand = draw_pair(Dependent(), rng, 1, 16)
    write_pair(tmp_path / "m", base[0], cand[0])
    earlier = tmp_path / "m" / "0_m_fmha_v2" / aside
    earlier.mkdir()
    lines = (tmp_path / "m" / "0_m_fmha_v2" / "samples" / "gpqa_diamond.jsonl").read_text()
    (earlier / "gpqa_diamond.jsonl").write_text(lines)  # an earlier run of the same eval
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    acc = checks(summary)["accuracy_vs_baseline"]
    if invalid:
        assert acc["verdict"] == "INCONCLUSIVE"
        assert aside in acc["numbers"]["undecided_because"]
        assert acc["numbers"]["earlier_runs"] == [aside]
    else:
        assert acc["verdict"] == "GO" and "earlier_runs" not in acc["numbers"]
