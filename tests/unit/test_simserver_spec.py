"""Speculative statistics of the simulated server: SGLang's identities, the target, determinism."""

from __future__ import annotations

import random

import pytest

from pipeline.simserver.spec import chain_probability, draw_spec, thresholds

GRID = [(steps, length) for steps in (1, 3, 5) for length in (1.0, 1.7, 2.6, steps + 1.0)]


@pytest.mark.parametrize(("steps", "accept_length"), GRID)
def test_chain_probability_solves_the_geometric_sum(steps: int, accept_length: float) -> None:
    p = chain_probability(accept_length, steps)
    target = min(accept_length, steps + 1.0)
    assert 0.0 <= p <= 1.0
    assert sum(p**i for i in range(steps + 1)) == pytest.approx(target, abs=1e-9)


@pytest.mark.parametrize(("given", "clipped"), [(0.2, 1.0), (9.0, 4.0)])
def test_chain_probability_clips_the_target(given: float, clipped: float) -> None:
    p = chain_probability(given, 3)
    assert sum(p**i for i in range(4)) == pytest.approx(clipped)


@pytest.mark.parametrize(("steps", "accept_length"), GRID)
@pytest.mark.parametrize("tokens", [1, 2, 5, 160, 777])
def test_sglang_identities_hold(steps: int, accept_length: float, tokens: int) -> None:
    asc = thresholds(chain_probability(accept_length, steps), steps)
    for seed in range(20):
        d = draw_spec(random.Random(seed), tokens, asc)
        assert sum(d.histogram) == d.verify_ct
        assert sum(i * n for i, n in enumerate(d.histogram)) == d.num_correct_drafts
        assert tokens == 1 + d.verify_ct + d.num_correct_drafts
        assert len(d.histogram) <= steps + 1
        assert not d.histogram or d.histogram[-1] > 0  # as long as the max index seen + 1


def test_one_token_needs_no_verify() -> None:
    d = draw_spec(random.Random(0), 1, thresholds(0.5, 3))
    assert (d.verify_ct, d.num_correct_drafts, d.histogram) == (0, 0, ())
    assert d.accept_rate(4) == 0.0


@pytest.mark.parametrize(("steps", "accept_length"), [(3, 1.4), (3, 2.6), (5, 3.9), (1, 1.5)])
def test_mean_tokens_per_verify_converge_to_the_target(steps: int, accept_length: float) -> None:
    asc = thresholds(chain_probability(accept_length, steps), steps)
    rng = random.Random(7)
    verify = correct = 0
    for _ in range(400):
        d = draw_spec(rng, 200, asc)
        verify += d.verify_ct
        correct += d.num_correct_drafts
    assert (verify + correct) / verify == pytest.approx(accept_length, rel=0.02)


def test_accept_rate_and_proposed_follow_sglang() -> None:
    d = draw_spec(random.Random(3), 120, thresholds(chain_probability(2.6, 3), 3))
    assert d.num_proposed(4) == d.verify_ct * 3
    assert d.accept_rate(4) == d.num_correct_drafts / (d.verify_ct * 3)


def test_same_seed_same_draw_other_seed_other_draw() -> None:
    asc = thresholds(chain_probability(2.6, 3), 3)
    a, b = (draw_spec(random.Random(11), 300, asc) for _ in range(2))
    assert a == b
    assert draw_spec(random.Random(12), 300, asc) != a


def test_full_acceptance_always_takes_every_draft() -> None:
    d = draw_spec(random.Random(0), 1 + 4 * 10, thresholds(1.0, 3))
    assert d.histogram == (0, 0, 0, 10)
