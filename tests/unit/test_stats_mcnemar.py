import pytest

from pipeline.stats.mcnemar import discordant_counts, mcnemar_exact
from pipeline.stats.multiplicity import holm


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (10, 2, 79 / 4096),  # P[Bin(12, 1/2) >= 10] = (66 + 12 + 1) / 2^12
        (3, 3, 42 / 64),  # (20 + 15 + 6 + 1) / 2^6
        (5, 0, 1 / 32),
        (0, 5, 1.0),
        (0, 0, 1.0),  # no discordant pair: no evidence
    ],
)
def test_mcnemar_exact_by_hand(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p)


@pytest.mark.parametrize(
    ("baseline", "candidate", "counts"),
    [
        ([1, 1, 0, 0], [1, 0, 1, 0], (1, 1)),
        ([1, 1, 1], [0, 0, 1], (2, 0)),
        ([], [], (0, 0)),
    ],
)
def test_discordant_counts(baseline, candidate, counts):
    assert discordant_counts(baseline, candidate) == counts


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="length"):
        discordant_counts([1, 0], [1])
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 2)


@pytest.mark.parametrize(
    ("pvalues", "adjusted"),
    [
        # sorted 0.01, 0.03, 0.04 -> 0.03, max(0.03, 0.06), max(0.06, 0.04)
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),
        ([0.5, 0.6], [1.0, 1.0]),
        ([0.02], [0.02]),
        ([0.01, float("nan"), 0.02], [0.02, float("nan"), 0.02]),
    ],
)
def test_holm_by_hand(pvalues, adjusted):
    assert holm(pvalues) == pytest.approx(adjusted, nan_ok=True)
