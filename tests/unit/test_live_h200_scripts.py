"""Pure parts of the live sign-off scripts (benchmarks/live_h200/): check-set choice, greedy
comparison and the choice of skip-softmax factors."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.live_h200 import greedy_check, skip_fraction


@pytest.mark.parametrize(
    ("n", "count", "picked"),
    [(10, 3, [0, 4, 9]), (4, 8, [0, 1, 2, 3]), (48, 8, [0, 7, 13, 20, 27, 34, 40, 47])],
)
def test_spread_keeps_both_ends(n: int, count: int, picked: list[int]) -> None:
    assert greedy_check.spread(list(range(n)), count) == picked


@pytest.mark.parametrize(
    ("a", "b", "n"), [([1, 2, 3], [1, 2, 3], 3), ([1, 2, 3], [1, 9, 3], 1), ([], [1], 0)]
)
def test_common_prefix(a: list[int], b: list[int], n: int) -> None:
    assert greedy_check.common_prefix(a, b) == n


def test_strip_end_drops_only_a_trailing_end_of_turn() -> None:
    assert greedy_check.strip_end([5, 261], 261) == [5]
    assert greedy_check.strip_end([261, 5], 261) == [261, 5]
    assert greedy_check.strip_end([], 261) == []


FRACTIONS = {100.0: 0.0, 1e3: 0.02, 1e4: 0.35, 3e4: 0.65, 1e5: 0.84, 1e6: 0.93}


@pytest.mark.parametrize(
    ("moderate", "aggressive", "want", "note"),
    [
        (0.2, 0.6, (1e4, 3e4), ""),  # the live run's choice
        (0.3, 0.9, (1e4, 1e6), ""),
        (0.2, 0.99, (1e4, 1e6), "no factor up to 1e+06 skips 99%"),  # the largest then
        (0.9, 0.6, (1e3, 3e4), "moderate taken two grid steps below aggressive"),
    ],
)
def test_pick_factors(moderate: float, aggressive: float, want: tuple, note: str) -> None:
    chosen = skip_fraction.pick(FRACTIONS, moderate, aggressive)
    assert (chosen["moderate"], chosen["aggressive"]) == want
    assert chosen["note"] == note
    assert chosen["aggressive_skip"] == FRACTIONS[want[1]]


@pytest.mark.parametrize(
    ("text", "grid"),
    [("1e4,3e4", (1e4, 3e4)), ("30000, 10000,10000", (1e4, 3e4)), ("0.5", (0.5,))],
)
def test_a_factor_grid_of_ones_own_is_sorted_and_unique(text: str, grid: tuple) -> None:
    assert skip_fraction.parse_factors(text) == grid


@pytest.mark.parametrize(("text", "said"), [("1e4,lots", "comma-separated"),
                                             ("0,1e4", "above 0"), ("", "above 0")])  # fmt: skip
def test_a_bad_factor_grid_says_what_to_write(text: str, said: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=said):
        skip_fraction.parse_factors(text)


class _OneLayer:
    """Stands in for the HF model: its forward records one layer's q, k, v as the hook does."""

    device = "cpu"

    def __call__(self, input_ids: object) -> None:
        import torch

        gen = torch.Generator().manual_seed(0)
        length = input_ids.shape[1]  # type: ignore[attr-defined]
        q, k, v = (torch.randn(length, 2, 128, generator=gen) for _ in range(3))
        skip_fraction.CAPTURED.append((4 * q, k, v))  # sharper scores: some tiles to skip


def test_a_prompt_is_tallied_on_the_grid_asked_for() -> None:
    out = skip_fraction.tally_prompt(_OneLayer(), list(range(1024)), (1e3, 1e6))
    for kv in ("auto", "fp8_e4m3"):
        assert set(out[kv]["skipped"]) == {"1000.0", "1000000.0"}
        assert out[kv]["skipped"]["1000.0"] < out[kv]["skipped"]["1000000.0"] < out[kv]["tiles"]
    assert out["tokens"] == 1024 and out["layers"] == 1


@pytest.mark.parametrize(("text", "span"), [("32,256", (32, 256)), ("0,1", (0, 1))])
def test_random_ids_are_a_low_high_range(text: str, span: tuple[int, int]) -> None:
    assert skip_fraction.parse_id_range(text) == span


@pytest.mark.parametrize(
    ("text", "said"), [("32", "LOW,HIGH"), ("a,b", "LOW,HIGH"), ("256,32", "LOW < HIGH")]
)
def test_a_bad_random_id_range_says_what_to_write(text: str, said: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=said):
        skip_fraction.parse_id_range(text)


def test_random_ids_are_tallied_at_each_prompts_length() -> None:
    rows = [skip_fraction.tally_prompt(_OneLayer(), list(range(n)), (1e3,)) for n in (512, 1024)]
    again = skip_fraction.random_rows(_OneLayer(), rows, (32, 256), (1e3,))
    assert [r["tokens"] for r in again] == [512, 1024]
    shares = skip_fraction.fractions(again, (1e3,))
    assert set(shares) == {"auto", "fp8_e4m3"} and 0 < shares["auto"][1e3] < 1


def test_each_length_is_tallied_on_its_prefix_of_one_forward() -> None:
    from benchmarks.live_h200 import longctx_skip

    rows = longctx_skip.tally_lengths(_OneLayer(), list(range(1024)), [512, 1024, 4096], (1e3,))
    assert [r["tokens"] for r in rows] == [512, 1024]  # 4096: longer than the prompt
    alone = skip_fraction.tally_prompt(_OneLayer(), list(range(512)), (1e3,))
    assert rows[0]["auto"] == alone["auto"] and rows[0]["fp8_e4m3"] == alone["fp8_e4m3"]
    found = longctx_skip.summarise(rows, (1e3,))
    assert set(found["per_length"]) == {"512", "1024"}
    assert found["per_length"]["512"]["auto"]["1000.0"] == round(
        alone["auto"]["skipped"]["1000.0"] / alone["auto"]["tiles"], 5
    )
