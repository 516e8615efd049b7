import math

import numpy as np
import pytest

from backends.server_info import ServerInfo
from pipeline.measuring.accept_stats import (
    cross_check,
    per_position_acceptance,
    ratio_stderr,
    server_accept,
    server_accept_length,
    summarize_accept,
)
from pipeline.results.accept_block import AcceptBlock


def spec(completion, verify, correct, hist, n_draft=4):
    return {
        "completion_tokens": completion,
        "verify_ct": verify,
        "num_correct_drafts": correct,
        "num_proposed_drafts": verify * (n_draft - 1),
        "histogram": hist,
    }


# The live 0.5.19 responses (tests/data/live-sglang-0.5.19): 64 tokens over 39 verifies with
# 24 correct drafts and histogram [25, 7, 4, 3]; and 48 tokens, 39 verifies, 8 correct, [32, 6, 1].
LIVE = [spec(64, 39, 24, [25, 7, 4, 3]), spec(48, 39, 8, [32, 6, 1])]


def test_token_weighted_vs_request_mean_on_live_figures():
    out = summarize_accept([{"spec": s, "error_kind": None} for s in LIVE], speculative=True)
    assert out.status == "ok"
    assert out.accept_length == pytest.approx(112 / 78)
    assert out.accept_length_request_mean == pytest.approx((64 / 39 + 48 / 39) / 2)
    assert out.accept_rate == pytest.approx(32 / 234)
    assert out.server_equivalent_accept_length == pytest.approx(110 / 78)
    assert list(out.per_position_acceptance) == pytest.approx([21 / 78, 8 / 78, 3 / 78])


@pytest.mark.parametrize(
    ("records", "speculative", "status"),
    [
        ([], True, "missing"),
        ([{"spec": None, "error_kind": None}], True, "missing"),
        ([{"spec": LIVE[0], "error_kind": None}], False, "not_speculative"),
        ([{"spec": LIVE[0], "error_kind": None}], True, "ok"),
    ],
)
def test_status(records, speculative, status):
    assert summarize_accept(records, speculative).status == status


@pytest.mark.parametrize(
    ("hists", "expected"),
    [
        ([[1, 0, 0, 1]], [0.5, 0.5, 0.5]),
        ([[2]], []),
        ([[0, 2], [0, 0, 2]], [1.0, 0.5]),
        ([], []),
    ],
)
def test_per_position_acceptance(hists, expected):
    assert per_position_acceptance(hists) == pytest.approx(expected)


def test_ratio_stderr_matches_bootstrap_order_of_magnitude():
    rng = np.random.default_rng(0)
    verify = rng.integers(20, 200, size=400).astype(float)
    completion = verify * rng.normal(2.5, 0.3, size=400)
    se = ratio_stderr(completion, verify)
    boots = []
    for _ in range(400):
        idx = rng.integers(0, 400, size=400)
        boots.append(completion[idx].sum() / verify[idx].sum())
    assert se == pytest.approx(float(np.std(boots)), rel=0.25)
    assert ratio_stderr(completion[:1], verify[:1]) is None


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({"internal_states": [{"avg_spec_accept_length": 1.74375}]}, 1.74375),
        (
            {"internal_states": [{"avg_spec_accept_length": 2.0}, {"avg_spec_accept_length": 3.0}]},
            2.5,
        ),
        ({"internal_states": [{"last_gen_throughput": 0.0}]}, None),
        ({}, None),
    ],
)
def test_server_accept_length(info, expected):
    assert server_accept_length(ServerInfo.parse(info)) == expected


def test_cross_check_flags_large_difference():
    sent = AcceptBlock(server_equivalent_accept_length=1.65)
    assert cross_check(sent, 1.744, 0.10).agrees is True
    out = cross_check(sent, 2.2, 0.10)
    assert out.agrees is False and math.isclose(out.relative_difference or 0.0, 0.55 / 1.65)
    assert cross_check(sent, None, 0.1).agrees is None


def test_server_accept_length_of_dp_ranks_is_weighted_by_their_verify_steps():
    info = ServerInfo.parse(
        {"internal_states": [{"avg_spec_accept_length": 2.0}, {"avg_spec_accept_length": 3.0}]}
    )
    assert server_accept_length(info, {"0": 300.0, "1": 100.0}) == pytest.approx(2.25, abs=1e-15)
    assert server_accept_length(info) == 2.5  # no weights known: the plain mean
    one_rank = ServerInfo.parse({"internal_states": [{"avg_spec_accept_length": 2.7}]})
    assert server_accept_length(one_rank) == 2.7


TWO_RANKS = ServerInfo.parse(
    {"internal_states": [{"avg_spec_accept_length": 2.0}, {"avg_spec_accept_length": 3.0}]}
)


def ranked(verify, rank):
    return {"spec": {"verify_ct": verify, "dp_rank": rank}, "error_kind": None}


@pytest.mark.parametrize(
    ("info", "by_label", "records", "value", "how"),
    [
        (ServerInfo.parse({"internal_states": [{"avg_spec_accept_length": 2.7}]}), None, [],
         2.7, None),  # one rank: nothing to weight
        (TWO_RANKS, {"0": 300.0, "1": 100.0}, [], 2.25, "verify steps per dp_rank label"),
        (TWO_RANKS, None, [ranked(300, 0), ranked(100, 1)], 2.25,
         "verify steps of the window's requests per meta_info.dp_rank"),
        (TWO_RANKS, {}, [ranked(100, 0), ranked(300, 1), ranked(0, None)], 2.75,
         "verify steps of the window's requests per meta_info.dp_rank"),  # no spec: no weight
        (TWO_RANKS, None, [ranked(300, 0), ranked(100, None)], 2.5, "unweighted"),  # a stream
        (TWO_RANKS, None, [], 2.5, "unweighted"),
    ],
)  # fmt: skip
def test_server_accept_says_how_it_weighted_the_dp_ranks(info, by_label, records, value, how):
    got, weighting = server_accept(info, by_label, records)
    assert got == pytest.approx(value, abs=1e-15)
    if how is None:
        assert weighting is None
    else:
        assert weighting is not None and weighting.startswith(how)
    if how == "unweighted":
        assert "no dp_rank label" in weighting and "2 DP ranks" in weighting
