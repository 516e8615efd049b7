"""Repeat-to-repeat sampling noise of the simulated model, opt-in ``sampling_spread`` (pure).

At ``sampling_spread = 0`` (the default) a request is right iff ``hash(seed, prompt) <
accuracy``: an identical prompt is always right or always wrong, and two cells of equal accuracy
answer alike. SGLang at temperature > 0 does neither (benchmarks/results/live-h200/aa_spread.md:
intraclass correlation of a question's repeats 0.29 on synth_mcq, 0.64 on synth_arith, 0.60 on
synth_retrieval; separate server starts draw independently). With ``s > 0`` each question gets a
difficulty ``p_q``, the ``hash(seed, question)``-quantile of the Beta law of mean ``accuracy``
and intraclass correlation ``1 - s``; each request is right iff ``hash(seed, nonce, prompt,
draw) < p_q``, the nonce drawn at every server start and ``draw`` counting the prompt's requests.
"""

from __future__ import annotations

import functools
import math


@functools.lru_cache(maxsize=1 << 16)
def question_difficulty(u: float, accuracy: float, spread: float) -> float:
    """The ``u``-quantile of the Beta law with mean ``accuracy`` and ICC ``1 - spread``.

    Args:
        u: the question's uniform in [0, 1).
        accuracy: the cell's accuracy (the mean over questions).
        spread: ``sampling_spread`` in (0, 1]; 1 gives every question ``accuracy``.

    Returns:
        The question's chance of being answered right on one request.
    """
    if spread >= 1.0 or accuracy <= 0.0 or accuracy >= 1.0:
        return accuracy
    # ICC = 1 / (a + b + 1), so a + b = (1 - ICC) / ICC.
    size = spread / (1.0 - spread)
    a, b = accuracy * size, (1.0 - accuracy) * size
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection: the simulated server imports no scipy (test_layering)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if regularized_beta(mid, a, b) < u else (lo, mid)
    return (lo + hi) / 2


def regularized_beta(x: float, a: float, b: float) -> float:
    """``I_x(a, b)``, the Beta law's CDF, by its continued fraction (Numerical Recipes 6.4)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(x, a, b) / a
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    """Lentz's evaluation of the incomplete beta's continued fraction."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # fmt: skip
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h
