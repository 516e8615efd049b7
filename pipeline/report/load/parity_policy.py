"""The ``parity:`` block of ``conf/tolerance`` (issue 39): how far a candidate's logprobs may be.

The band a candidate's divergence from the baseline must stay inside is measured, not guessed
(``pipeline.stats.parity_verdict``): ``noise_factor`` x the larger upper bound of the A/A (the
``aa_variant``, a second start of the baseline, re-scoring the baseline's sequences) and of the
``reference`` pair (a trusted backend against the baseline: "no further from fa3 than another
trusted kernel is"), at least ``floor`` and at most ``ceiling`` (SGLang's own gate is
``kl_div < 0.002``).
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.config_file import Check, checked
from pipeline.stats.parity import METRICS
from pipeline.stats.parity_verdict import ParityTolerance

NON_NEGATIVE = Check(0.0, hint="(a divergence per token, e.g. 0.002 nats of KL)")


@dataclass(frozen=True)
class ParityPolicy:
    """``parity:`` as written in the policy file."""

    metric: str = checked("kl_topk", Check(choices=METRICS))
    ceiling: float = checked(0.002, NON_NEGATIVE)
    floor: float = checked(0.0, NON_NEGATIVE)
    noise_factor: float = checked(2.0, Check(1.0, hint="(x the A/A's upper bound, >= 1)"))
    confidence: float = checked(0.95, Check(0.5, 1.0, open_low=True, open_high=True))
    aa_variant: str = "fa3_repeat"  # a second start of the baseline: the A/A
    reference: str | None = None  # a trusted variant whose distance also sets the band

    @property
    def verdict_rule(self) -> ParityTolerance:
        """The rule ``stats.parity_verdict.judge`` applies."""
        return ParityTolerance(
            self.metric, self.ceiling, self.floor, self.noise_factor, self.confidence
        )

    def problem(self) -> str | None:
        """Why the values cannot make a band (None when they can)."""
        if self.floor > self.ceiling:
            return f"parity.floor {self.floor} is above parity.ceiling {self.ceiling}"
        return None
