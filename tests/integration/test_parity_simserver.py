"""Teacher-forced parity through simulated servers over real HTTP (issue 39).

The baseline generates at temperature 1 and keeps its ids; the baseline and the candidate re-score
them by prefill (``parity_client``); ``stats.parity`` measures the divergence and
``stats.parity_verdict`` judges it. The simulated candidate's logits carry noise of a known size
(an effect's ``logit_sigma``), so the true KL on these very positions is computed from the
simulated model itself and the measured interval must hold it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.measuring.parity_client import Generated, generate_with_logprobs, rescore
from pipeline.measuring.speed.run import SpeedClient
from pipeline.simserver.logprob_replies import cell_model
from pipeline.simserver.logprobs import context_hashes, exact_kl
from pipeline.simserver.simconfig import Effect, SimConfig
from pipeline.stats.parity import (
    ScoredSequence,
    Scores,
    question_totals,
    sequence_parity,
    token_divergence,
)
from pipeline.stats.parity_verdict import GO, NOGO, clustered_mean, parity_band, parity_verdict
from tests.helpers.sim import Sim

pytestmark = pytest.mark.integration
SIGMA = 0.2
EFFECT = {"match": {"attention_backend": "trtllm_mha"}, "logit_sigma": SIGMA}
QUESTIONS, PER_QUESTION, NEW_TOKENS, TOP_K = 24, 2, 40, 10  # top 10 > the 8 candidates


@contextlib.contextmanager
def server(folder: Path, backend: str, **conf: Any) -> Iterator[SpeedClient]:
    sim = Sim(folder, ["--attention-backend", backend], {"sglang_version": "0.5.23", **conf}, {})
    try:
        sim.wait_ready()
        yield SpeedClient(sim.url, (None, None), 30.0, phase="parity")
    finally:
        sim.kill_group()


def prompts() -> list[tuple[str, tuple[int, ...]]]:
    return [
        (f"q{q}", tuple(1000 * q + 17 * r + j for j in range(12)))
        for q in range(QUESTIONS)
        for r in range(PER_QUESTION)
    ]


def generated(client: SpeedClient) -> list[tuple[str, Generated]]:
    return [
        (q, generate_with_logprobs(client, ids, NEW_TOKENS, 1.0, TOP_K)) for q, ids in prompts()
    ]


def scored(base: list[tuple[str, Generated]], client: SpeedClient) -> list[Scores]:
    return [rescore(client, g.prompt_ids, g.output_ids, TOP_K) for _, g in base]


def pair(base, base_scores, cand_scores) -> list[ScoredSequence]:
    return [
        ScoredSequence(q, len(g.prompt_ids), b, c)
        for (q, g), b, c in zip(base, base_scores, cand_scores, strict=True)
    ]


def divergence(seqs: list[ScoredSequence], metric: str):
    return clustered_mean(question_totals([sequence_parity(s) for s in seqs], metric))


def true_mean_kl(base: list[tuple[str, Generated]], effects: list[dict[str, Any]]) -> float:
    """The exact KL(base || candidate) averaged over the baseline's scored positions."""
    conf = SimConfig(effects=[Effect(**e) for e in effects])
    p_model, q_model = cell_model(conf, [], 0), cell_model(conf, [0], 0)
    total, count = 0.0, 0
    for _, g in base:
        ids = g.prompt_ids + g.output_ids
        hashes = context_hashes(ids, p_model.seed)
        for t in range(len(g.prompt_ids), len(ids)):
            total += exact_kl(p_model.at(hashes[t - 1], t), q_model.at(hashes[t - 1], t))
            count += 1
    return total / count


def test_a_known_perturbation_is_measured_within_its_interval_and_is_no_go(tmp_path):
    with server(tmp_path / "base", "fa3", effects=[EFFECT]) as client:
        base = generated(client)
        base_scores = scored(base, client)
    with server(tmp_path / "base2", "fa3", effects=[EFFECT]) as client:
        aa_scores = scored(base, client)
    with server(tmp_path / "cand", "trtllm_mha", effects=[EFFECT]) as client:
        cand_scores = scored(base, client)
    # a prefill re-score reports what decoding reported (temperature 1, no restart noise)
    assert [s.logprobs for s in base_scores] == [g.decode.logprobs for _, g in base]
    assert [s.top1 for s in base_scores] == [g.decode.top1 for _, g in base]
    truth = true_mean_kl(base, [EFFECT])
    seqs = pair(base, base_scores, cand_scores)
    sampled = divergence(seqs, "kl_sampled")
    assert sampled.lower <= truth <= sampled.upper, (sampled, truth)
    # top 10 rows list every candidate id: the coarse KL is the exact one
    assert divergence(seqs, "kl_topk").estimate == pytest.approx(truth, rel=1e-6)
    assert 0.005 < truth < 0.03  # sigma 0.2: about sigma^2 / 2 * 0.6 per token
    aa = divergence(pair(base, base_scores, aa_scores), "kl_topk")
    assert aa.estimate == 0.0  # two starts without restart noise are bit-identical
    band = parity_band(aa, ceiling=0.05, floor=1e-3)
    assert parity_verdict(divergence(seqs, "kl_topk"), band).verdict == NOGO
    assert parity_verdict(aa, band).verdict == GO
    agree = token_divergence(seqs[0]).values["top1_disagree"]
    assert set(agree.tolist()) <= {0.0, 1.0}


def test_an_aa_with_restart_noise_is_inside_the_band_and_a_perturbation_beyond(tmp_path):
    noisy = {"logprobs": {"restart_sigma": 0.05}, "effects": [EFFECT]}
    with server(tmp_path / "base", "fa3", **noisy) as client:
        base = generated(client)
        base_scores = scored(base, client)
    runs = {}
    for name, backend in (("aa", "fa3"), ("aa_again", "fa3"), ("cand", "trtllm_mha")):
        with server(tmp_path / name, backend, **noisy) as client:
            runs[name] = divergence(pair(base, base_scores, scored(base, client)), "kl_topk")
    assert runs["aa"].estimate > 0  # the starts differ
    band = parity_band(runs["aa"], ceiling=0.05)
    assert band.source == "aa"
    assert parity_verdict(runs["aa_again"], band).verdict == GO, (runs, band)
    assert parity_verdict(runs["cand"], band).verdict == NOGO, (runs, band)


@pytest.mark.parametrize("release", ["0.5.19", "0.5.23"])
def test_each_release_answers_with_the_logprob_keys_where_sglang_puts_them(tmp_path, release):
    sim = Sim(tmp_path, ["--attention-backend", "fa3"], {"sglang_version": release}, {})
    try:
        sim.wait_ready()
        client = SpeedClient(sim.url, (None, None), 30.0, phase="parity")
        body = {"input_ids": [5, 6, 7], "return_logprob": True, "logprob_start_len": 1,
                "top_logprobs_num": 2, "sampling_params": {"max_new_tokens": 0}}  # fmt: skip
        answer = client.generate(body)
    finally:
        sim.kill_group()
    assert isinstance(answer, dict) and answer["output_ids"] == []
    meta = answer["meta_info"]
    keys = list(meta)
    # after the scheduler's fields (num_retractions, 0.5.23's storage waits), before the counts
    start = keys.index("input_token_logprobs")
    assert keys[start : start + 5] == [
        "input_token_logprobs", "output_token_logprobs", "output_token_logprobs_length",
        "input_top_logprobs", "output_top_logprobs",
    ]  # fmt: skip
    assert keys[start - 1] == ("num_retractions" if release == "0.5.19" else "storage_staging_wait")
    assert keys[start + 5] == "reasoning_tokens"
    assert meta["finish_reason"] == {"type": "length", "length": 0}
    assert [row[1] for row in meta["input_token_logprobs"]] == [6, 7]
    assert meta["input_token_logprobs"][0][0] is None and meta["input_top_logprobs"][0] is None
