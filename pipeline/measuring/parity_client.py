"""Teacher-forced parity's two requests on SGLang's native ``/generate`` (issue 39).

1. ``generate_with_logprobs``: the baseline generates from prompt ids and keeps its output ids
   (with the decode-time logprobs, which are temperature-scaled unless the temperature is 1 or
   greedy: docs/sglang-logprobs.md).
2. ``rescore``: a server scores given ids by prefill: ``input_ids`` = prompt + output,
   ``logprob_start_len`` = len(prompt) - 1 (SGLang's first input entry is null, so the scored
   tokens start right after it), ``max_new_tokens`` 0. Only the input lists are read: with
   speculation on SGLang does not take the prefill-only path and may generate a token.

The requests go through the speed phase's client (``SpeedClient.generate``, urllib); the bodies
and the parsing are pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.measuring.eval_window import MeasureError
from pipeline.stats.parity import Scores, TopRow

PHASE = "parity"
# SGLang's sampling_params that leave the whole vocabulary in play (sampling_params.py 0.5.23:
# top_k -1 is TOP_K_ALL, 249-250; the others are the defaults, 157-160)
FULL_SUPPORT = {"top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}


class GenerateClient(Protocol):
    """Anything that POSTs a ``/generate`` body and returns the parsed JSON answer."""

    def generate(self, body: dict[str, Any]) -> object:
        """POST ``body`` to ``/generate``."""
        ...


@dataclass(frozen=True)
class Generated:
    """One baseline generation: the ids it produced and what it reported while decoding."""

    prompt_ids: tuple[int, ...]
    output_ids: tuple[int, ...]
    decode: Scores  # decode-time logprobs of the output ids (and top rows when asked)


def generation_body(
    prompt_ids: Sequence[int], max_new_tokens: int, temperature: float, top_k: int
) -> dict[str, Any]:
    """``/generate`` from ids with the output's logprobs (and ``top_k`` ids per position).

    Every truncation is switched off explicitly (``top_p`` 1, ``top_k`` -1, ``min_p`` 0, no
    repetition penalty), over any ``--preferred-sampling-params`` of the server
    (``tokenizer_manager.py`` 0.5.19:1352-1353, 0.5.23:1549-1550 merge those under the
    request's): the ids must be samples of the whole distribution the re-score reports.
    """
    params = {"max_new_tokens": max_new_tokens, "temperature": temperature, **FULL_SUPPORT}
    return {
        "input_ids": list(prompt_ids),
        "sampling_params": params,
        "return_logprob": True,
        "top_logprobs_num": top_k,
    }


def scoring_body(
    prompt_ids: Sequence[int], output_ids: Sequence[int], top_k: int
) -> dict[str, Any]:
    """A prefill of prompt + output that scores every output id (``max_new_tokens`` 0)."""
    if not prompt_ids:
        raise ValueError("rescore: the prompt has no ids; a scored token needs a context")
    return {
        "input_ids": [*prompt_ids, *output_ids],
        "sampling_params": {"max_new_tokens": 0, "temperature": 1.0},
        "return_logprob": True,
        "logprob_start_len": len(prompt_ids) - 1,
        "top_logprobs_num": top_k,
    }


def _meta(answer: object) -> dict[str, Any]:
    meta = answer.get("meta_info") if isinstance(answer, dict) else None
    if not isinstance(meta, dict):
        raise MeasureError(PHASE, f"{PHASE}: /generate answered without meta_info: {answer!r:.200}")
    return meta


def _triples(meta: dict[str, Any], key: str) -> list[list[Any]]:
    rows = meta.get(key)
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) >= 2 for r in rows):
        raise MeasureError(
            PHASE, f"{PHASE}: meta_info.{key} is not a list of [logprob, token_id, text] triples"
        )
    return rows


def _top_rows(meta: dict[str, Any], key: str, count: int) -> tuple[TopRow, ...]:
    rows = meta.get(key)
    if rows is None:
        return ()
    if not isinstance(rows, list) or len(rows) != count:
        raise MeasureError(PHASE, f"{PHASE}: meta_info.{key} does not have {count} rows")
    return tuple(() if r is None else tuple((int(t[1]), float(t[0])) for t in r) for r in rows)


def _logprob(value: object, key: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        raise MeasureError(PHASE, f"{PHASE}: meta_info.{key} holds {value!r} where a logprob is")
    return float(value)


def parse_generated(prompt_ids: Sequence[int], answer: object) -> Generated:
    """The output ids and decode-time logprobs of a ``generation_body`` answer."""
    meta = _meta(answer)
    rows = _triples(meta, "output_token_logprobs")
    ids = tuple(int(r[1]) for r in rows)
    out = answer.get("output_ids") if isinstance(answer, dict) else None
    if isinstance(out, list) and [int(x) for x in out] != list(ids):
        raise MeasureError(PHASE, f"{PHASE}: output_ids differ from output_token_logprobs' ids")
    lps = tuple(_logprob(r[0], "output_token_logprobs") for r in rows)
    top = _top_rows(meta, "output_top_logprobs", len(rows))
    return Generated(tuple(prompt_ids), ids, Scores(lps, top))


def parse_rescored(output_ids: Sequence[int], answer: object) -> Scores:
    """The scores of ``output_ids`` in a ``scoring_body`` answer (entry 0 is the context's)."""
    meta = _meta(answer)
    rows = _triples(meta, "input_token_logprobs")[1:]
    scored = [int(r[1]) for r in rows]
    if scored != list(output_ids):
        raise MeasureError(
            PHASE,
            f"{PHASE}: the server scored {len(scored)} ids that are not the {len(output_ids)} "
            "sent (logprob_start_len = prompt length - 1 must put them after the first entry)",
        )
    lps = tuple(_logprob(r[0], "input_token_logprobs") for r in rows)
    top = _top_rows(meta, "input_top_logprobs", len(rows) + 1)[1:]
    return Scores(lps, top)


def generate_with_logprobs(
    client: GenerateClient,
    prompt_ids: Sequence[int],
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int = 0,
) -> Generated:
    """Generate from ``prompt_ids`` and keep the output ids with their logprobs.

    Raises:
        MeasureError: the server refused, or its answer lacks the keys (named).
    """
    body = generation_body(prompt_ids, max_new_tokens, temperature, top_k)
    return parse_generated(prompt_ids, client.generate(body))


def rescore(
    client: GenerateClient, prompt_ids: Sequence[int], output_ids: Sequence[int], top_k: int = 0
) -> Scores:
    """Score ``output_ids`` after ``prompt_ids`` by one prefill: per-token logprobs, top rows.

    Raises:
        MeasureError: the server refused, or scored other ids than those sent.
    """
    answer = client.generate(scoring_body(prompt_ids, output_ids, top_k))
    return parse_rescored(output_ids, answer)
