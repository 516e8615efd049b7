import math

import numpy as np
import pytest

from pipeline.stats.parity import (
    ScoredSequence,
    Scores,
    Totals,
    coarse_kl,
    position_bins,
    question_totals,
    sequence_parity,
    token_divergence,
)
from pipeline.stats.parity_verdict import (
    GO,
    INCONCLUSIVE,
    NOGO,
    ClusteredMean,
    ParityTolerance,
    clustered_mean,
    judge,
    parity_band,
    parity_verdict,
)

LN = math.log


def _row(*pairs):
    return tuple((i, LN(p)) for i, p in pairs)


@pytest.mark.parametrize(
    ("base", "cand", "kl"),
    [
        # identical rows: 0
        (_row((1, 0.5), (2, 0.3)), _row((1, 0.5), (2, 0.3)), 0.0),
        # full support listed (rest 0): the exact KL of two two-point laws
        (_row((1, 0.5), (2, 0.5)), _row((1, 0.8), (2, 0.2)),
         0.5 * LN(0.5 / 0.8) + 0.5 * LN(0.5 / 0.2)),
        # the rest bucket: base {0.6, rest 0.4} vs cand {0.3, rest 0.7}
        (_row((1, 0.6)), _row((1, 0.3)), 0.6 * LN(0.6 / 0.3) + 0.4 * LN(0.4 / 0.7)),
        # id 2 absent from the candidate's row: it takes the candidate's last logprob (0.1)
        (_row((1, 0.5), (2, 0.5)), _row((1, 0.9), (3, 0.1)),
         0.5 * LN(0.5 / 0.9) + 0.5 * LN(0.5 / 0.1)),
        ((), _row((1, 0.5)), math.nan),
        (_row((1, 0.5)), (), math.nan),
    ],
)  # fmt: skip
def test_coarse_kl_by_hand(base, cand, kl):
    out = coarse_kl(base, cand)
    if math.isnan(kl):
        assert math.isnan(out)
    else:
        # the bound of an absent id can make the coarse form negative: it is floored at 0
        assert out == pytest.approx(max(kl, 0.0), abs=1e-12)


def _seq(question, base_lp, cand_lp, base_top=(), cand_top=(), start=10):
    return ScoredSequence(question, start, Scores(tuple(base_lp), tuple(base_top)),
                          Scores(tuple(cand_lp), tuple(cand_top)))  # fmt: skip


@pytest.mark.parametrize(
    ("base_lp", "cand_lp", "sampled", "absd"),
    [
        ([-1.0, -2.0], [-1.0, -2.0], [0.0, 0.0], [0.0, 0.0]),
        ([-1.0, -2.0], [-1.5, -1.0], [0.5, -1.0], [0.5, 1.0]),
    ],
)
def test_token_divergence_per_token(base_lp, cand_lp, sampled, absd):
    div = token_divergence(_seq("q", base_lp, cand_lp))
    assert div.values["kl_sampled"].tolist() == sampled
    assert div.values["abs_delta"].tolist() == absd
    assert np.isnan(div.values["kl_topk"]).all()  # no top rows asked for
    assert div.positions.tolist() == [10, 11]


def test_top1_disagreement_reads_the_first_id_of_each_row():
    top_a = (_row((5, 0.6), (6, 0.3)), _row((7, 0.9)))
    top_b = (_row((5, 0.5), (6, 0.4)), _row((8, 0.5), (7, 0.4)))
    div = token_divergence(_seq("q", [-0.5, -0.1], [-0.7, -0.9], top_a, top_b))
    assert div.values["top1_disagree"].tolist() == [0.0, 1.0]
    assert (div.values["kl_topk"] >= 0).all()


def test_different_token_counts_are_refused_naming_the_question():
    with pytest.raises(ValueError, match=r"'q7'.*2 tokens.*candidate 1"):
        token_divergence(_seq("q7", [-1.0, -1.0], [-1.0]))


def test_question_totals_add_a_questions_sequences():
    seqs = [
        sequence_parity(_seq("a", [-1.0, -1.0], [-1.5, -1.0])),
        sequence_parity(_seq("a", [-1.0], [-2.0])),
        sequence_parity(_seq("b", [-1.0], [-1.0])),
    ]
    out = question_totals(seqs, "abs_delta")
    assert out == {"a": Totals(1.5, 3), "b": Totals(0.0, 1)}


def test_position_bins_split_tokens_by_context_position():
    seqs = [_seq("a", [-1.0] * 4, [-2.0, -2.0, -1.0, -1.0], start=0)]
    bins = position_bins(seqs, [0, 2])
    assert [(b.low, b.high) for b in bins] == [(0, 2), (2, None)]
    assert bins[0].metrics["abs_delta"] == Totals(2.0, 2)
    assert bins[1].metrics["abs_delta"] == Totals(0.0, 2)


@pytest.mark.parametrize("edges", [[], [0, 0], [5, 2]])
def test_position_bins_refuse_bad_edges(edges):
    with pytest.raises(ValueError, match="increasing"):
        position_bins([], edges)


def test_clustered_mean_by_hand():
    # totals 2/2 and 0/2: estimate 0.5, residuals (2-1)/4, (0-1)/4, se = sqrt(2 * 2/16) = 0.5
    out = clustered_mean({"a": Totals(2.0, 2), "b": Totals(0.0, 2)})
    assert out.estimate == 0.5 and out.se == pytest.approx(0.5)
    t = 6.313751514675  # t(0.95, 1)
    assert out.upper == pytest.approx(0.5 + t * 0.5) and out.lower == pytest.approx(0.5 - t * 0.5)


def test_clustered_mean_with_one_question_is_unbounded():
    out = clustered_mean({"a": Totals(1.0, 5)})
    assert out.upper == math.inf and out.lower == -math.inf


@pytest.mark.parametrize(
    ("rows", "match"), [({}, "no scored token"), ({"a": Totals(0.0, 0)}, "no scored")]
)
def test_clustered_mean_refuses_nothing(rows, match):
    with pytest.raises(ValueError, match=match):
        clustered_mean(rows)


def _cm(lower, upper):
    return ClusteredMean((lower + upper) / 2, 1.0, lower, upper, 10, 100)


@pytest.mark.parametrize(
    ("aa", "ref", "ceiling", "floor", "limit", "source"),
    [
        (_cm(0, 1e-4), None, 1e-2, 0.0, 2e-4, "aa"),
        (_cm(0, 1e-4), _cm(1e-4, 3e-4), 1e-2, 0.0, 6e-4, "reference"),
        (_cm(0, 1e-2), None, 1e-2, 0.0, 1e-2, "ceiling"),
        (_cm(-1e-5, 0), None, 1e-2, 1e-3, 1e-3, "floor"),  # a deterministic A/A: the floor
        (_cm(-2e-4, -1e-4), None, 1e-2, 0.0, 0.0, "aa"),  # negative noise counts as none
    ],
)
def test_band_table(aa, ref, ceiling, floor, limit, source):
    band = parity_band(aa, ceiling, reference=ref, floor=floor)
    assert band.limit == pytest.approx(limit) and band.source == source


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"ceiling": -1.0}, "floor"), ({"ceiling": 1.0, "floor": 2.0}, "floor"),
     ({"ceiling": 1.0, "noise_factor": 0.5}, "noise_factor")],
)  # fmt: skip
def test_band_refuses_nonsense(kwargs, match):
    with pytest.raises(ValueError, match=match):
        parity_band(_cm(0, 1), **kwargs)


@pytest.mark.parametrize(
    ("lower", "upper", "verdict"),
    [
        (0.0, 0.5, GO),
        (0.0, 1.0, GO),  # on the band's edge is inside
        (0.5, 1.5, INCONCLUSIVE),
        (1.0, 2.0, INCONCLUSIVE),  # a lower bound on the edge is not beyond it
        (1.01, 2.0, NOGO),
    ],
)
def test_verdict_table(lower, upper, verdict):
    band = parity_band(_cm(0.0, 0.5), ceiling=10.0)  # limit 1.0
    out = parity_verdict(_cm(lower, upper), band)
    assert out.verdict == verdict and out.reason.startswith(verdict)


@pytest.mark.parametrize(
    ("candidate", "aa", "reference", "verdict"),
    [
        (_cm(0.0, 0.0), _cm(0.0, 0.0), None, GO),  # bit-identical: GO at floor 0
        (_cm(1e-5, 2e-5), _cm(0.0, 0.0), None, NOGO),  # differs, no pair: beyond a zero band
        (_cm(1e-5, 2e-5), _cm(0.0, 0.0), _cm(1e-5, 3e-5), GO),  # no further than the pair
        (_cm(3e-3, 4e-3), _cm(0.0, 0.0), _cm(2e-3, 3e-3), NOGO),  # the ceiling (0.002) caps it
    ],
)
def test_the_default_policy(candidate, aa, reference, verdict):
    assert judge(ParityTolerance(), candidate, aa, reference).verdict == verdict
