"""One level's figures from its requests (pure): throughput, per-user speed, latency percentiles.

TTFT is from a request's send to its first content chunk; inter-token latency the gaps between
its content chunks (per chunk: SGLang streams a chunk per ``--stream-interval`` tokens, 1 by
default; the simulated server sends 4 tokens a chunk); TPOT a request's time after its first
chunk per further output token, and tokens/s per user its inverse (the median request's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.measuring.speed.serving.plan import Level
from pipeline.results.result_schema import ServingPointJson


@dataclass(frozen=True)
class Sample:
    """One answered request: its send time, its content chunks' arrivals and what it counted."""

    sent: float
    arrivals: tuple[float, ...]
    done: float
    output_tokens: int
    prompt_tokens: int | None
    verify_ct: int | None  # speculative verify steps (sglext); None: speculation off

    @property
    def tpot_s(self) -> float | None:
        """Seconds per output token after the first (None: one chunk or one token)."""
        if len(self.arrivals) < 2 or self.output_tokens < 2:
            return None
        return (self.arrivals[-1] - self.arrivals[0]) / (self.output_tokens - 1)


def quantiles_ms(values: Sequence[float]) -> dict[str, float]:
    """p50, p90 and p99 of ``values`` (seconds) in ms; empty when there are none."""
    if not values:
        return {}
    p50, p90, p99 = np.percentile(np.asarray(values) * 1000.0, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99)}


def _accept(samples: Sequence[Sample]) -> float | None:
    steps = [s.verify_ct for s in samples]
    if not steps or any(v is None for v in steps) or not sum(v or 0 for v in steps):
        return None
    return sum(s.output_tokens for s in samples) / sum(v or 0 for v in steps)


def point(
    level: Level, samples: Sequence[Sample], errors: int, gpus: int, metrics: Mapping[str, float]
) -> ServingPointJson:
    """The level's ``serving.points[]`` entry."""
    ok = [s for s in samples if s.arrivals]
    start = min((s.sent for s in samples), default=0.0)
    duration = max((s.done for s in samples), default=start) - start
    tokens = sum(s.output_tokens for s in ok)
    rate = tokens / duration if duration > 0 else 0.0
    tpots = [t for t in (s.tpot_s for s in ok) if t]
    prompts = [s.prompt_tokens for s in ok if s.prompt_tokens is not None]
    gaps = [b - a for s in ok for a, b in zip(s.arrivals, s.arrivals[1:], strict=False)]
    return {
        "bucket": level.bucket,
        "concurrency": level.concurrency,
        "requests": len(ok),
        "errors": errors + len(samples) - len(ok),
        "duration_s": duration,
        "prompt_tokens_mean": float(np.mean(prompts)) if prompts else None,
        "output_tokens": tokens,
        "output_tokens_per_s": rate,
        "output_tokens_per_s_per_gpu": rate / gpus,
        "tokens_per_s_per_user": 1.0 / float(np.median(tpots)) if tpots else None,
        "ttft_ms": quantiles_ms([s.arrivals[0] - s.sent for s in ok]),
        "itl_ms": quantiles_ms(gaps),
        "tpot_ms": quantiles_ms(tpots),
        "e2e_ms": quantiles_ms([s.done - s.sent for s in ok]),
        "accept_length": _accept(ok),
        "metrics": dict(metrics),
    }


def counters(text: str | None) -> dict[str, float]:
    """The server's Prometheus counters (``*_total``), summed over their label sets."""
    out: dict[str, float] = {}
    for line in (text or "").splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, _, value = line.rpartition(" ")
        metric = name.split("{", 1)[0]
        if not metric.endswith("_total"):
            continue
        try:
            out[metric] = out.get(metric, 0.0) + float(value)
        except ValueError:
            continue
    return out


def deltas(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """What each counter grew by over a level (the ones present at both ends)."""
    return {k: after[k] - before[k] for k in sorted(after) if k in before}
