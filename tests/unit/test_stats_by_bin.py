"""Paired verdicts by context-length bin or category (pipeline/stats/by_bin.py)."""

import math

import numpy as np
import pytest

from pipeline.stats.by_bin import (
    AcceptPairs,
    accept_by_bin,
    accuracy_by_bin,
    bin_order,
    jackknife_log_ratio_se,
    length_bin,
)
from pipeline.stats.outcomes import Outcomes
from pipeline.stats.signoff import accuracy_evidence

BINS = ["4k-8k", "16k-32k", "32k-64k", "64k-128k"]


@pytest.mark.parametrize(("tokens", "label"), [
    (0, "<=4k"), (4096, "<=4k"), (4097, "4k-8k"), (16384, "8k-16k"), (16385, "16k-32k"),
    (131072, "64k-128k"), (131073, ">128k"),
])  # fmt: skip
def test_length_bins_follow_rulers_lengths(tokens, label):
    assert length_bin(tokens) == label


def test_a_negative_length_is_refused():
    with pytest.raises(ValueError, match="tokens=-1"):
        length_bin(-1)


def test_bins_keep_the_length_order_and_sort_categories_after():
    assert bin_order([">128k", "<=4k", "16k-32k", "<=4k"]) == ["<=4k", "16k-32k", ">128k"]
    assert bin_order(["prose", "code", "4k-8k"]) == ["4k-8k", "code", "prose"]


def _outcomes(rng, p_base, p_cand, k=8):
    draw = lambda p: (rng.random((len(p), k)) < p[:, None]).astype(float)  # noqa: E731
    return Outcomes(draw(p_base), draw(p_cand), np.ones(len(p_base), bool), True)


def _setup(drop_in_last_bin: float, per_bin: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    p = np.tile(np.linspace(0.3, 0.95, per_bin), len(BINS))
    labels = [b for b in BINS for _ in range(per_bin)]
    cand = p.copy()
    cand[-per_bin:] = np.clip(p[-per_bin:] - drop_in_last_bin, 0, 1)
    return _outcomes(rng, p, cand), labels


def test_a_drop_in_one_length_bin_is_no_go_while_the_aggregate_is_go():
    # 12 points lost at 64k-128k only: 3 points over the eval, inside a 5-point margin.
    o, labels = _setup(0.12)
    aggregate = accuracy_evidence(o, 0.05, 0.05)
    assert aggregate.p_go <= 0.05  # the eval's own check says GO
    found = accuracy_by_bin(o, labels, 0.05, 0.05)
    by_label = {c.label: c for c in found.checks}
    assert by_label["64k-128k"].verdict == "NO-GO" and found.verdict == "NO-GO"
    assert by_label["64k-128k"].lower > 0.05 and by_label["4k-8k"].verdict == "GO"
    assert found.family == 4 and "Holm-corrected over 4 bins" in found.multiplicity()


def test_clean_bins_rarely_raise_a_no_go_across_the_family():
    alarms = sum(accuracy_by_bin(*_setup(0.0, 60, seed), 0.02, 0.05).verdict == "NO-GO"
                 for seed in range(100))  # fmt: skip
    assert alarms <= 0.05 * 100 + 3  # family-wise, Holm over 4 bins: at most alpha (+ noise)


def test_a_bin_with_one_question_decides_nothing_and_labels_must_match():
    o, labels = _setup(0.0, per_bin=3)
    labels = [*labels[:-1], "solo"]
    found = accuracy_by_bin(o, labels, 0.02, 0.05)
    solo = next(c for c in found.checks if c.label == "solo")
    assert solo.verdict == "INCONCLUSIVE" and math.isnan(solo.p_nogo)
    with pytest.raises(ValueError, match="3 bin labels for 12 questions"):
        accuracy_by_bin(o, labels[:3], 0.02, 0.05)


def test_accept_length_that_falls_only_in_one_category_is_no_go_there():
    rng = np.random.default_rng(3)
    n = 400
    labels = ["code"] * (n // 2) + ["prose"] * (n // 2)
    verify = rng.integers(20, 40, n).astype(float)
    base_tokens = verify * rng.normal(3.0, 0.2, n)
    cand_tokens = base_tokens * np.where(np.asarray(labels) == "prose", 0.8, 1.0)
    pairs = AcceptPairs(base_tokens, verify, cand_tokens, verify.copy(),
                        [f"q{i}" for i in range(n)], labels)  # fmt: skip
    found = accept_by_bin(pairs, 0.05, 0.05)
    by_label = {c.label: c for c in found.checks}
    assert by_label["prose"].verdict == "NO-GO" and by_label["code"].verdict == "GO"
    assert by_label["prose"].drop == pytest.approx(-math.log(0.8), rel=1e-9)


def test_the_accept_se_is_the_delete_one_question_jackknife():
    # Leaving out a: log(3/1); leaving out b: log(1/1); (G-1)/G * sum of squares -> log(3) / 2.
    se = jackknife_log_ratio_se([np.array([1.0, 3.0])], [np.array([1.0, 1.0])], ["a", "b"])
    assert se == pytest.approx(math.log(3) / 2)
    # Repeats of one question count as one cluster: splitting b's row leaves the SE as it is.
    split = jackknife_log_ratio_se(
        [np.array([1.0, 1.0, 2.0])], [np.array([1.0, 0.5, 0.5])], ["a", "b", "b"]
    )
    assert split == pytest.approx(se)


def test_the_jackknife_needs_two_questions_and_is_infinite_when_one_holds_a_total():
    with pytest.raises(ValueError, match="two questions"):
        jackknife_log_ratio_se([np.array([1.0, 2.0])], [np.array([1.0, 1.0])], ["a", "a"])
    assert (
        jackknife_log_ratio_se([np.array([0.0, 2.0])], [np.array([1.0, 1.0])], ["a", "b"])
        == math.inf
    )
