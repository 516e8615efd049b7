"""record_dp_counters.py's summary: per-rank figures from replies, states in order, labels."""

from __future__ import annotations

import math

import pytest

from benchmarks.live_h200.record_dp_counters import index_weighted, per_rank, summarise


def reply(rank: int | None, tokens: int, verify: int) -> dict:
    meta = {"completion_tokens": tokens, "spec_verify_ct": verify}
    return {"meta_info": meta if rank is None else {**meta, "dp_rank": rank}}


REPLIES = [reply(0, 64, 32), reply(0, 64, 16), reply(1, 64, 64)]
METRICS = """# HELP sglang:spec_accept_length Mean acceptance length
sglang:spec_accept_length{model_name="m",tp_rank="0",dp_rank="0"} 2.6
sglang:spec_accept_length{model_name="m",tp_rank="0",dp_rank="1"} 1.0
sglang:spec_verify_calls_total{model_name="m",engine_type="unified"} 112.0
sglang:generation_tokens_total{model_name="m"} 192.0
"""


def test_per_rank_sums_each_ranks_requests():
    ranks = per_rank(REPLIES)
    assert ranks["0"] == {"requests": 2, "tokens": 128, "verify": 48, "accept_length": 128 / 48}
    assert ranks["1"]["accept_length"] == 1.0
    assert math.isnan(per_rank([reply(None, 5, 0)])["None"]["accept_length"])


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ([128 / 48, 1.0], 192 / 112),  # states in rank order: the request-weighted figure
        ([1.0, 128 / 48], (48 * 1.0 + 64 * 128 / 48) / 112),  # swapped: another figure
        ([], None),
        ([2.0, None], None),  # a rank without its figure yet
    ],
)
def test_index_weighted_takes_state_i_as_rank_i(states, expected):
    result = index_weighted(states, per_rank(REPLIES))
    assert result == (pytest.approx(expected) if expected is not None else None)


def test_summary_names_the_spec_series_labels_and_the_states_order():
    infos = [{"dp_size": 2, "internal_states": [{"avg_spec_accept_length": a} for a in pair]}
             for pair in ([1.0, 128 / 48], [128 / 48, 1.0])]  # fmt: skip
    summary = summarise(REPLIES, infos, METRICS)
    assert summary["dp_size"] == 2
    assert summary["request_weighted_accept_length"] == pytest.approx(192 / 112)
    assert summary["states_in_order"] == [[1.0, 128 / 48], [128 / 48, 1.0]]
    assert summary["index_weighted_accept_length"] != pytest.approx(192 / 112)  # order moved
    labels = summary["spec_series_labels"]
    assert labels["sglang:spec_accept_length"][1].endswith('dp_rank="1"')
    assert labels["sglang:spec_verify_calls_total"] == ['model_name="m",engine_type="unified"']
    assert "sglang:generation_tokens_total" not in labels
