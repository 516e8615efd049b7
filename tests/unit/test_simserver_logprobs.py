import math

import pytest

from pipeline.simserver.jobs import BadRequest, parse_generate
from pipeline.simserver.logprob_replies import (
    LogprobAsk,
    LogprobModel,
    LogprobRequestError,
    cell_model,
    reply,
)
from pipeline.simserver.logprobs import (
    Noise,
    Shape,
    at_temperature,
    context_hashes,
    draws,
    exact_kl,
    position,
    sample,
)
from pipeline.simserver.simconfig import Effect, LogprobConf, SimConfig

SHAPE = Shape(vocab=1000, candidates=8, logit_scale=2.0, rest_mass=0.05)


def test_a_distribution_sums_to_one_and_keeps_its_rest_mass():
    pos = position(SHAPE, 12345, 0, ())
    probs = [math.exp(pos.logprob(i)) for i in range(SHAPE.vocab)]
    assert sum(probs) == pytest.approx(1.0)
    rest = sum(p for i, p in enumerate(probs) if i not in pos.ids)
    assert rest == pytest.approx(SHAPE.rest_mass)


@pytest.mark.parametrize("sigma", [0.02, 0.05, 0.1])
def test_logit_noise_has_the_kl_its_sigma_says(sigma):
    # second order: E KL = sigma^2 / 2 * (P_c - sum p_j^2), averaged over many contexts
    kls, approx = [], []
    for context in range(2000):
        p = position(SHAPE, context * 7919, 5, ())
        q = position(SHAPE, context * 7919, 5, (Noise(99, sigma),))
        kls.append(exact_kl(p, q))
        ps = [math.exp(z - p.log_norm) for z in p.logits]
        approx.append(sigma**2 / 2 * (sum(ps) - sum(x * x for x in ps)))
    assert sum(kls) / len(kls) == pytest.approx(sum(approx) / len(approx), rel=0.1)
    assert exact_kl(p, p) == 0.0


def test_noise_starts_at_its_position():
    noise = (Noise(5, 0.5, from_position=100),)
    assert position(SHAPE, 77, 99, noise) == position(SHAPE, 77, 99, ())
    assert position(SHAPE, 77, 100, noise) != position(SHAPE, 77, 100, ())


def test_sampling_follows_the_distribution():
    pos = position(SHAPE, 4242, 0, ())
    stream = draws(1)
    counts: dict[int, int] = {}
    for _ in range(20000):
        token = sample(pos, stream, SHAPE.vocab)
        counts[token] = counts.get(token, 0) + 1
    for token in pos.ids:
        p = math.exp(pos.logprob(token))
        assert counts.get(token, 0) / 20000 == pytest.approx(p, abs=4 * math.sqrt(p / 20000) + 1e-3)


def test_temperature_sharpens():
    pos = position(SHAPE, 31, 0, ())
    best = max(pos.ids, key=pos.logprob)
    assert at_temperature(pos, 0.5).logprob(best) > pos.logprob(best)
    assert at_temperature(pos, 1.0) is pos and at_temperature(pos, 0.0) is pos


MODEL = LogprobModel(SHAPE, seed=3)


def test_prefill_rescore_reports_what_generation_reported():
    prompt = (5, 6, 7, 8)
    gen = reply(MODEL, LogprobAsk(-1, 3, 1.0), prompt, 12, "0:0")
    assert gen.meta["input_token_logprobs"] == []
    assert len(gen.output_ids) == 12 == gen.meta["output_token_logprobs_length"]
    ids = prompt + gen.output_ids
    score = reply(MODEL, LogprobAsk(len(prompt) - 1, 3, 1.0), ids, 0, "0:0")
    inputs = score.meta["input_token_logprobs"]
    assert inputs[0] == [None, prompt[-1], None] and score.meta["input_top_logprobs"][0] is None
    assert inputs[1:] == gen.meta["output_token_logprobs"]
    assert score.meta["input_top_logprobs"][1:] == gen.meta["output_top_logprobs"]
    assert score.output_ids == () and score.meta["output_token_logprobs"] == []
    assert list(score.meta) == [
        "input_token_logprobs", "output_token_logprobs", "output_token_logprobs_length",
        "input_top_logprobs", "output_top_logprobs",
    ]  # fmt: skip


def test_without_top_logprobs_num_there_are_no_top_keys():
    out = reply(MODEL, LogprobAsk(0, 0, 1.0), (1, 2, 3), 2, "0:0")
    assert "input_top_logprobs" not in out.meta and len(out.meta["input_token_logprobs"]) == 3


def test_a_start_at_the_inputs_end_is_refused_as_sglang_does():
    with pytest.raises(LogprobRequestError, match="logprob_start_len=3 is higher"):
        reply(MODEL, LogprobAsk(3, 0, 1.0), (1, 2, 3), 0, "0:0")


def test_greedy_generation_takes_the_best_id():
    out = reply(MODEL, LogprobAsk(-1, 1, 0.0), (9, 9), 4, "0:0")
    for token, row in zip(out.output_ids, out.meta["output_top_logprobs"], strict=True):
        assert row[0][1] == token


@pytest.mark.parametrize(
    ("effects", "restart", "sigmas"),
    [
        ([Effect(match={"attention_backend": "trtllm_mha"}, logit_sigma=0.1)], 0.0, [0.1]),
        ([Effect(match={"attention_backend": "trtllm_mha"}, accuracy_delta=-0.01)], 0.0, []),
        ([], 0.03, [0.03]),
    ],
)
def test_cell_model_takes_the_matched_effects_and_the_restart_noise(effects, restart, sigmas):
    conf = SimConfig(effects=effects, logprobs=LogprobConf(restart_sigma=restart))
    model = cell_model(conf, [0] if effects else [], restart_salt=17)
    assert [n.sigma for n in model.noises] == sigmas


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"input_ids": [1, "x"]}, "input_ids"),
        ({"input_ids": [1], "return_logprob": True, "logprob_start_len": "0"}, "logprob_start_len"),
        ({"input_ids": [1], "return_logprob": True, "sampling_params": {"temperature": -1}},
         "temperature"),
        ({"input_ids": [1], "sampling_params": {"max_new_tokens": -1}}, "max_new_tokens"),
    ],
)  # fmt: skip
def test_bad_logprob_requests_are_refused(body, match):
    with pytest.raises(BadRequest, match=match):
        parse_generate(body, "m")


def test_max_new_tokens_zero_is_a_prefill():
    job = parse_generate({"input_ids": [4, 5], "sampling_params": {"max_new_tokens": 0}}, "m")
    assert job.cap == 0 and job.items[0].ids == (4, 5)


def test_context_hashes_roll():
    assert context_hashes([1, 2, 3], 0)[:2] == context_hashes([1, 2], 0)
    assert context_hashes([1, 2], 0) != context_hashes([2, 1], 0)
