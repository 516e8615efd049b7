"""The decode/verify path of the parity phase (issue 39 item 2): decoding against prefill.

A prefill re-score tests the prefill kernel only. What a server reported while decoding (with
speculation: verifying, on 0.5.23 trtllm_mha verifies on XQA) is compared here with its own
prefill re-score of the same tokens: ``parity/decode.json``, each metric of ``stats.parity``
with the decode-time logprobs as the reference side (the tokens were sampled from them at
temperature 1, so ``kl_sampled`` estimates KL(decode || prefill)). The baseline's own figure is
the noise a candidate's is judged against by the report: a verify-path bug (a mask silently
causal) moves a candidate's decode logprobs away from its prefill, and the baseline's do not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.results.cell_paths import parity_dir
from pipeline.results.store import write_json_atomic
from pipeline.stats.parity import ScoredSequence, Scores

DECODE = "decode.json"


def _decode_scores(seq: dict[str, Any]) -> Scores:
    top = tuple(tuple((int(i), float(lp)) for i, lp in r) for r in seq.get("decode_top", []))
    return Scores(tuple(float(x) for x in seq["decode_logprobs"]), top)


def _prefill_scores(row: dict[str, Any]) -> Scores:
    top = tuple(tuple((int(i), float(lp)) for i, lp in r) for r in row.get("top", []))
    return Scores(tuple(float(x) for x in row["logprobs"]), top)


def decode_pairs(
    sequences: list[dict[str, Any]], scores: list[dict[str, Any]]
) -> list[ScoredSequence]:
    """Each generated sequence: decoding's logprobs (reference) and the prefill re-score's."""
    return [
        ScoredSequence(s["question"], len(s["prompt_ids"]), _decode_scores(s), _prefill_scores(r))
        for s, r in zip(sequences, scores, strict=True)
    ]


def write_decode_summary(cell_dir: Path, summary: dict[str, Any]) -> None:
    """``parity/decode.json``: the cell's decode-vs-prefill divergence (``parity_run.summary``)."""
    write_json_atomic(parity_dir(cell_dir) / DECODE, summary)
