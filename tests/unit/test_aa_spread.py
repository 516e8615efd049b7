"""The A/A spread measures of the live sign-off (benchmarks/live_h200/aa_spread.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks.live_h200 import aa_spread as aa

# One mixed question out of three: MSB 1, MSW 1/9, ICC (1 - 1/9) / (1 + 3/9).
ICC_CASES = [
    ([[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]], 2 / 3),
    ([[1, 1], [0, 0], [1, 1]], 1.0),  # repeats always agree
    ([[1, 0], [0, 1], [1, 0], [0, 1]], -1.0),  # every question split evenly: MSB 0
    ([[1, 1, np.nan], [0, 0, 0]], 1.0),  # a missing repeat (k0 for unbalanced groups)
]


@pytest.mark.parametrize(("rows", "expected"), ICC_CASES)
def test_anova_icc(rows: list[list[float]], expected: float) -> None:
    assert aa.anova_icc(np.array(rows, dtype=float)) == pytest.approx(expected)


def test_spread_of_two_repeats() -> None:
    s = aa.spread_of(np.array([[1, 0], [1, 1], [0, 0], [1, 0]], dtype=float))
    assert (s.mean, s.repeats, s.mixed_share) == (0.5, 2, 0.5)
    assert s.within_var == pytest.approx(0.25)  # unbiased variance 0.5 on the two mixed ones
    assert s.sd_observed == pytest.approx(math.sqrt(2 * 0.25**2))  # repeats at 0.75 and 0.25
    assert s.sd_predicted == pytest.approx(math.sqrt(0.5 + 0.5) / 4)
    assert s.between_var == pytest.approx(np.var([0.5, 1, 0, 0.5], ddof=1))


def test_spread_of_constant_repeats_is_not_mixed() -> None:
    # Accept lengths equal up to float noise count as one value, not as a mixed question.
    s = aa.spread_of(np.array([[26 / 7, 3.714285714285714], [2.5, 2.5]]))
    assert (s.mixed_share, s.sd_predicted) == (0.0, pytest.approx(0.0))


PAIR_CASES = [
    # (base, cand, diff, agreement, shared share)
    ([[1, 0], [1, 1], [0, 0], [1, 0]], [[1, 0], [1, 1], [0, 0], [1, 0]], 0.0, 1.0, 1.0),
    ([[1, 0], [1, 1], [0, 0], [1, 0]], [[0, 1], [1, 1], [0, 0], [0, 1]], 0.0, 0.5, -1.0),
    ([[1, 1], [0, 0], [1, 0]], [[1, 1], [1, 1], [1, 0]], 1 / 3, 2 / 3, 1.0),  # only q3 varies
]


@pytest.mark.parametrize(("base", "cand", "diff", "agree", "shared"), PAIR_CASES)
def test_paired_difference(
    base: list[list[float]], cand: list[list[float]], diff: float, agree: float, shared: float
) -> None:
    p = aa.paired_difference(np.array(base, dtype=float), np.array(cand, dtype=float))
    assert (p.diff, p.agreement) == (pytest.approx(diff), pytest.approx(agree))
    assert p.shared_share == pytest.approx(shared)
    d = np.mean(cand, axis=1) - np.mean(base, axis=1)
    assert p.se == pytest.approx(np.std(d, ddof=1) / math.sqrt(len(d)))


BETA_CASES = [
    # (p, repeats, icc, within_var, mixed_share)
    ([0.0, 1.0], 8, 1.0, 0.0, 0.0),
    ([0.5, 0.5], 3, 0.0, 0.25, 0.75),
    ([0.2, 0.8], 2, 0.36, 0.16, 0.32),
]


@pytest.mark.parametrize(("p", "repeats", "icc", "within", "mixed"), BETA_CASES)
def test_beta_model(p: list[float], repeats: int, icc: float, within: float, mixed: float) -> None:
    m = aa.beta_model(np.array(p), repeats)
    assert (m["icc"], m["within_var"]) == (pytest.approx(icc), pytest.approx(within))
    assert m["mixed_share"] == pytest.approx(mixed)


def test_samples_matrix_and_common_repeats() -> None:
    line = '{{"question_id": "{q}", "repeat": {r}, "correct": {c}, "spec": {s}}}'
    a = aa.samples_of([
        line.format(q="b", r=0, c="true", s='{"accept_length": 3.0}'),
        line.format(q="a", r=1, c="false", s="null"),
        line.format(q="a", r=0, c="true", s='{"accept_length": 2.0}'),
        "",
        line.format(q="b", r=1, c="false", s='{"accept_length": 4.0}'),
        line.format(q="b", r=2, c="true", s='{"accept_length": 4.0}'),
    ])  # fmt: skip
    got = aa.matrix_of(a, 0)
    np.testing.assert_array_equal(got, [[1, 0, np.nan], [1, 0, 1]])  # rows a, b
    np.testing.assert_array_equal(aa.matrix_of(a, 1, [1, 0]), [[2.0, np.nan], [3.0, 4.0]])  # sorted
    b = {"a": {0: (1.0, 1.0), 1: (1.0, 1.0), 2: (0.0, 1.0)}, "b": {1: (0.0, 1.0)}}
    assert aa.common_repeats(a, b) == [1]


def test_to_json_writes_no_nan() -> None:
    s = aa.spread_of(np.array([[1.0, 1.0], [0.0, 0.0]]))
    text = json.dumps(aa.to_json({"x": s, "y": float("nan")}), allow_nan=False)
    assert json.loads(text)["y"] is None


def test_committed_figures_come_from_the_committed_samples(tmp_path: Path) -> None:
    # aa_spread.json is what the script computes from signoff/samples.tar.xz, and the tables
    # compare what they claim: 24 repeats of fa3, the A/A pairs on the repeats both ran.
    result = aa.measure(aa.extracted(aa.SIGNOFF / "samples.tar.xz", tmp_path))
    committed = json.loads(aa.OUT.with_suffix(".json").read_text())
    assert committed["evals"] == json.loads(json.dumps(aa.to_json(result)))
    mcq = result["synth_mcq"]
    assert mcq["cells"]["fa3 (r2-base)"]["correct"].repeats == 24  # type: ignore[index]
    pair = mcq["pairs"]["fa3_repeat (r2-aa) - fa3 (r2-base)"]["correct"]  # type: ignore[index]
    assert (pair.repeats, pair.questions) == (10, 180)
