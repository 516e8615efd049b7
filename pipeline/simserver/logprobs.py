"""The simulated model's next-token distributions, for ``return_logprob`` (pure).

The answer model (``model.py``) writes words; this one gives every context a full distribution
over ``vocab`` ids, so that re-scoring, sampling and the exact KL between two cells are defined.
At each position the context's hash picks ``candidates`` distinct ids with normal logits (times
``logit_scale``); every other id shares one logit, set so that the baseline puts ``rest_mass`` on
them. A perturbation (an effect's ``logit_sigma``, or ``restart_sigma`` per server start) adds
independent normal noise of that standard deviation to the candidates' logits, the same noise for
the same context, so its size is known: for small sigma the expected KL(base || perturbed) is
``sigma^2 / 2 * (P_c - sum_j p_j^2)`` per position, ``P_c`` the candidates' mass
(``exact_kl`` gives it exactly). Nothing here is random: every draw is a hash of its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_UNIT = 1.0 / float(1 << 53)


def mix64(x: int) -> int:
    """SplitMix64's finaliser: a 64-bit integer hash."""
    z = (x + _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def draws(seed: int) -> Iterator[int]:
    """An endless stream of 64-bit integers from ``seed`` (SplitMix64)."""
    state = seed & _MASK
    while True:
        state = (state + _GOLDEN) & _MASK
        yield mix64(state)


def _uniform(stream: Iterator[int]) -> float:
    return (next(stream) >> 11) * _UNIT


def _normals(stream: Iterator[int], count: int) -> list[float]:
    out: list[float] = []
    while len(out) < count:  # Box-Muller, two normals per pair of uniforms
        r = math.sqrt(-2.0 * math.log(1.0 - _uniform(stream)))
        angle = 2.0 * math.pi * _uniform(stream)
        out += [r * math.cos(angle), r * math.sin(angle)]
    return out[:count]


@dataclass(frozen=True)
class Shape:
    """The ``logprobs`` block of ``--sim-config``: the distributions' shape."""

    vocab: int
    candidates: int
    logit_scale: float
    rest_mass: float


@dataclass(frozen=True)
class Noise:
    """One logit perturbation: its own noise (``salt``), its size and where it starts."""

    salt: int
    sigma: float
    from_position: int = 0  # context positions before this one are left alone


@dataclass(frozen=True)
class Position:
    """One context's next-token distribution (at temperature 1)."""

    ids: tuple[int, ...]  # the candidates
    logits: tuple[float, ...]
    rest_logit: float  # each other id's logit
    rest_count: int
    context: int  # the context's hash (top rows fill from it)

    @property
    def log_norm(self) -> float:
        """``log Z`` over the whole vocabulary."""
        return _logsumexp([*self.logits, self.rest_logit + math.log(self.rest_count)])

    def logprob(self, token: int) -> float:
        """``log p(token)``."""
        try:
            logit = self.logits[self.ids.index(token)]
        except ValueError:
            logit = self.rest_logit
        return logit - self.log_norm

    def top(self, k: int, vocab: int) -> list[tuple[int, float]]:
        """The ``k`` most likely ids, best first (past the candidates: other ids, in hash order)."""
        z = self.log_norm
        order = sorted(range(len(self.ids)), key=lambda j: (-self.logits[j], self.ids[j]))
        row = [(self.ids[j], self.logits[j] - z) for j in order[:k]]
        stream = draws(self.context ^ 0x5EED)
        while len(row) < k:
            token = next(stream) % vocab
            if token not in self.ids and all(token != t for t, _ in row):
                row.append((token, self.rest_logit - z))
        return row


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def extend_hash(context: int, token: int) -> int:
    """The hash of a context one ``token`` longer."""
    return mix64(context ^ ((token * 0x100000001B3) & _MASK))


def context_hashes(ids: Sequence[int], seed: int) -> list[int]:
    """``h[i]``: the hash of ``ids[: i + 1]`` (rolling, so a long prompt costs one pass)."""
    out, h = [], mix64(seed)
    for token in ids:
        h = extend_hash(h, token)
        out.append(h)
    return out


def position(shape: Shape, context: int, at: int, noises: Sequence[Noise]) -> Position:
    """The distribution after a context of hash ``context`` predicting context position ``at``."""
    stream = draws(context)
    ids: list[int] = []
    while len(ids) < shape.candidates:
        token = next(stream) % shape.vocab
        if token not in ids:
            ids.append(token)
    logits = [shape.logit_scale * n for n in _normals(stream, shape.candidates)]
    rest_count = shape.vocab - shape.candidates
    rest_total = _logsumexp(logits) + math.log(shape.rest_mass / (1.0 - shape.rest_mass))
    for noise in noises:
        if noise.sigma > 0 and at >= noise.from_position:
            extra = _normals(draws(mix64(context ^ noise.salt)), shape.candidates)
            logits = [z + noise.sigma * e for z, e in zip(logits, extra, strict=True)]
    return Position(tuple(ids), tuple(logits), rest_total - math.log(rest_count), rest_count,
                    context)  # fmt: skip


def exact_kl(p: Position, q: Position) -> float:
    """KL(p || q) over the whole vocabulary (the two share their candidates)."""
    zp, zq = p.log_norm, q.log_norm
    out = 0.0
    for a, b in zip(p.logits, q.logits, strict=True):
        lp, lq = a - zp, b - zq
        out += math.exp(lp) * (lp - lq)
    lp, lq = p.rest_logit - zp, q.rest_logit - zq
    return out + p.rest_count * math.exp(lp) * (lp - lq)


def sample(pos: Position, stream: Iterator[int], vocab: int) -> int:
    """One id drawn from ``pos`` (scale it with ``at_temperature`` first)."""
    z = pos.log_norm
    u = _uniform(stream)
    for token, logit in zip(pos.ids, pos.logits, strict=True):
        u -= math.exp(logit - z)
        if u < 0:
            return token
    while True:  # the rest: any other id, uniformly
        token = next(stream) % vocab
        if token not in pos.ids:
            return token


def greedy(pos: Position) -> int:
    """The most likely id (the lowest id among equals)."""
    return pos.ids[max(range(len(pos.ids)), key=lambda j: (pos.logits[j], -pos.ids[j]))]


def at_temperature(pos: Position, temperature: float) -> Position:
    """``pos`` with every logit divided by ``temperature``.

    0 or 1 leave it unchanged: SGLang's greedy logprobs are the unscaled ones.
    """
    if temperature <= 0 or temperature == 1.0:
        return pos
    logits = tuple(z / temperature for z in pos.logits)
    return Position(pos.ids, logits, pos.rest_logit / temperature, pos.rest_count, pos.context)
