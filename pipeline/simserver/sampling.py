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
    from scipy.special import betaincinv  # only servers with the noise on pay for scipy

    return float(betaincinv(accuracy * size, (1.0 - accuracy) * size, u))
