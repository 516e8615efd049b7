"""TensorRT-LLM's fixed threshold rule (a pass/fail band), for comparison only.

TensorRT-LLM treats the reference as an independent sample with the worst-case Bernoulli
standard deviation (sigma = 0.5, "50" on its 0-100 scale) and passes a run iff
``accuracy >= reference + Phi^-1(alpha) * sqrt(2 sigma^2 / n)``. It never says "inconclusive":
a noisy run passes by default.
"""

from __future__ import annotations

import math

from scipy import stats


def trtllm_band(n_samples: int, alpha: float = 0.05, sigma: float = 0.5) -> float:
    """How far below the reference the pass threshold sits (0.0827 for GPQA-diamond, n=198)."""
    return float(-stats.norm.ppf(alpha) * math.sqrt(2 * sigma**2 / n_samples))


def trtllm_theta(
    n_samples: int, alpha: float = 0.05, beta: float = 0.2, sigma: float = 0.5
) -> float:
    """The minimum detectable effect TensorRT-LLM reports next to its threshold."""
    return float(
        -(stats.norm.ppf(alpha) + stats.norm.ppf(beta)) * math.sqrt(2 * sigma**2 / n_samples)
    )


def trtllm_samples_for_theta(
    theta: float, alpha: float = 0.05, beta: float = 0.2, sigma: float = 0.5
) -> int:
    """Samples its formula asks for so that the detectable effect equals ``theta``."""
    z = stats.norm.ppf(alpha) + stats.norm.ppf(beta)
    return math.ceil(2 * sigma**2 * z**2 / theta**2)


def trtllm_passes(
    accuracy: float, reference: float, n_samples: int, alpha: float = 0.05, sigma: float = 0.5
) -> bool:
    """TensorRT-LLM's verdict: True (pass) iff accuracy >= reference - band."""
    return accuracy >= reference - trtllm_band(n_samples, alpha, sigma)
