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
from pipeline.results.parity_rows import ScoreRow, SequenceRow
from pipeline.results.store import write_json_atomic
from pipeline.stats.parity import ScoredSequence, scores_of

DECODE = "decode.json"


def decode_pairs(sequences: list[SequenceRow], scores: list[ScoreRow]) -> list[ScoredSequence]:
    """Each generated sequence: decoding's logprobs (reference) and the prefill re-score's."""
    return [
        ScoredSequence(
            s["question"],
            len(s["prompt_ids"]),
            scores_of(s["decode_logprobs"], s.get("decode_top", [])),
            scores_of(r["logprobs"], r.get("top", [])),
        )
        for s, r in zip(sequences, scores, strict=True)
    ]


def write_decode_summary(cell_dir: Path, summary: dict[str, Any]) -> None:
    """``parity/decode.json``: the cell's decode-vs-prefill divergence (``parity_run.summary``)."""
    write_json_atomic(parity_dir(cell_dir) / DECODE, summary)
