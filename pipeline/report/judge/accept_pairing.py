"""Accept statistics of two cells paired as their accuracy is (``pairing.nested_repeats``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.report.judge.pairing import Samples, nested_repeats


def _spec(record: dict[str, Any]) -> tuple[float, float] | None:
    spec = record.get("spec") or {}
    verify, tokens = spec.get("verify_ct"), spec.get("completion_tokens")
    if record.get("error_kind") or not verify or not tokens:
        return None
    return float(tokens), float(verify)


def accept_rows(samples: Samples) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Completion tokens, verify steps and question id of every request with spec statistics."""
    rows = [(q, s) for (q, _), r in sorted(samples.items()) if (s := _spec(r)) is not None]
    return (
        np.array([s[0] for _, s in rows]),
        np.array([s[1] for _, s in rows]),
        [q for q, _ in rows],
    )


def accept_pairs(base: Samples, cand: Samples) -> tuple[list[np.ndarray], list[str]]:
    """``[c_base, v_base, c_cand, v_cand]`` over prompts where both have spec statistics.

    Paired by (question, repeat) as the accuracy is (``nested_repeats``); when the two sides'
    repeat indices do not line up, by question: each side's totals over its own repeats.
    """
    if not nested_repeats(base, cand):
        return _accept_by_question(base, cand)
    keys = [
        k
        for k in sorted(set(base) & set(cand))
        if _spec(base[k]) is not None and _spec(cand[k]) is not None
    ]
    cols: list[list[float]] = [[], [], [], []]
    for k in keys:
        (cb, vb), (cc, vc) = _spec(base[k]), _spec(cand[k])  # type: ignore[misc]
        for col, value in zip(cols, (cb, vb, cc, vc), strict=True):
            col.append(value)
    return [np.array(c) for c in cols], [q for q, _ in keys]


def _spec_totals(samples: Samples) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for (q, _), record in samples.items():
        if (spec := _spec(record)) is not None:
            tokens, verify = out.get(q, (0.0, 0.0))
            out[q] = (tokens + spec[0], verify + spec[1])
    return out


def _accept_by_question(base: Samples, cand: Samples) -> tuple[list[np.ndarray], list[str]]:
    b, c = _spec_totals(base), _spec_totals(cand)
    questions = sorted(set(b) & set(c))
    cols = [[b[q][0] for q in questions], [b[q][1] for q in questions],
            [c[q][0] for q in questions], [c[q][1] for q in questions]]  # fmt: skip
    return [np.array(col) for col in cols], questions
