"""The parity phase of a cell (``parity.enabled``; issue 39): sequences, re-scores, divergence.

- Without ``parity.sequences_from`` the cell is a baseline: it generates one sequence per
  prompt (random ids, ``speed.plan.prompt_ids``, or an eval's with ``parity.prompts=eval:NAME``)
  at ``parity.temperature`` and keeps the ids in ``parity/sequences.jsonl``.
- With it, the cell reads that cell's sequences.
- Either way it re-scores every sequence by prefill (``parity_client.rescore``) into
  ``parity/scores.jsonl``; a cell that re-scored another's sequences also writes
  ``parity/summary.json``: each metric of ``stats.parity`` against that cell's own re-score,
  clustered by prompt, and per context-position bin. A second start of the baseline variant
  re-scoring the baseline's sequences is the A/A whose summary sets the band of
  ``stats.parity_verdict``; judging across cells is the report's part.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pipeline.config.schema import ParityConf
from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.parity_client import PHASE, generate_with_logprobs, rescore
from pipeline.measuring.parity_decode import decode_pairs, write_decode_summary
from pipeline.measuring.parity_greedy import greedy_phase
from pipeline.measuring.speed.plan import TokenRange, prompt_ids
from pipeline.measuring.speed.prompts import PromptPool
from pipeline.measuring.speed.run import SpeedClient
from pipeline.results.cell_paths import parity_dir
from pipeline.results.parity_rows import MeanJson, ScoreRow, SequenceRow, TopJson
from pipeline.results.store import write_json_atomic
from pipeline.stats.parity import (
    METRICS,
    ScoredSequence,
    Scores,
    Totals,
    position_bins,
    question_totals,
    scores_of,
    sequence_parity,
)
from pipeline.stats.parity_verdict import ClusteredMean, clustered_mean

log = logging.getLogger(__name__)
SEQUENCES, SCORES, SUMMARY = "sequences.jsonl", "scores.jsonl", "summary.json"


def parity_prompts(conf: ParityConf, pool: PromptPool | None) -> list[list[int]]:
    """The first ``parity.sequences`` prompts of the eval's pool, or random ids."""
    if pool is not None:
        return [list(p) for p in pool.prompts[: conf.sequences]]
    ids = TokenRange(conf.first_token_id, conf.vocab_size, "parity.vocab_size")
    return [prompt_ids(ids, conf.seed, s, conf.prompt_tokens) for s in range(conf.sequences)]


def generate_sequences(
    conf: ParityConf, client: SpeedClient, pool: PromptPool | None
) -> list[SequenceRow]:
    """One sequence per prompt: ``{question, prompt_ids, output_ids, decode_*}`` lines."""
    rows = []
    for serial, prompt in enumerate(parity_prompts(conf, pool)):
        out = generate_with_logprobs(client, prompt, conf.new_tokens, conf.temperature, conf.top_k)
        # what decoding reported, kept for the decode/verify-path comparison (issue 39 item 2)
        row = SequenceRow(question=f"p{serial}", prompt_ids=prompt,
                          output_ids=list(out.output_ids),
                          decode_logprobs=list(out.decode.logprobs),
                          decode_top=_top_json(out.decode))  # fmt: skip
        # the eval question a sequence's prompt is: the report links its worst sequences to it
        if pool is not None and serial < len(pool.question_ids):
            row["eval"], row["question_id"] = pool.eval_name, pool.question_ids[serial]
        rows.append(row)
    return rows


def _top_json(scores: Scores) -> TopJson:
    return [[[i, lp] for i, lp in row] for row in scores.top]  # ids stay ints in the file


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The lines of a parity file.

    Raises:
        MeasureError: naming the file when it is missing or not JSON lines.
    """
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as err:
        raise MeasureError(
            PHASE,
            f"{PHASE}: cannot read {path}: {err}; parity.sequences_from must name a cell "
            "that ran with parity.enabled=true",
        ) from err


def _write_jsonl(path: Path, rows: Sequence[SequenceRow] | Sequence[ScoreRow]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(path)


def score_rows(sequences: list[SequenceRow], client: SpeedClient, top_k: int) -> list[ScoreRow]:
    """Every sequence re-scored: ``{question, logprobs, top}`` lines (top as [id, logprob])."""
    out = []
    for seq in sequences:
        s = rescore(client, seq["prompt_ids"], seq["output_ids"], top_k)
        out.append(ScoreRow(question=seq["question"], logprobs=list(s.logprobs), top=_top_json(s)))
    return out


def paired(
    sequences: list[SequenceRow], base: list[ScoreRow], cand: list[ScoreRow]
) -> list[ScoredSequence]:
    """The sequences with the source cell's scores and this cell's.

    Raises:
        MeasureError: when the files do not list the same sequences.
    """
    names = [[r["question"] for r in rows] for rows in (sequences, base, cand)]
    if not names[0] == names[1] == names[2]:
        raise MeasureError(
            PHASE,
            f"{PHASE}: {len(sequences)} sequences, {len(base)} and {len(cand)} scores, not the "
            "same ones in order: re-run the source cell's parity phase",
        )
    return [
        ScoredSequence(s["question"], len(s["prompt_ids"]), _scores(b), _scores(c))
        for s, b, c in zip(sequences, base, cand, strict=True)
    ]


def _scores(row: ScoreRow) -> Scores:
    return scores_of(row["logprobs"], row["top"])


def _bound(x: float) -> float | None:
    return None if math.isinf(x) or math.isnan(x) else x


def _mean_json(m: ClusteredMean) -> MeanJson:
    return {"estimate": _bound(m.estimate), "lower": _bound(m.lower), "upper": _bound(m.upper),
            "se": _bound(m.se), "questions": m.questions, "tokens": m.tokens}  # fmt: skip


def summary(seqs: list[ScoredSequence], edges: list[int], source: str) -> dict[str, Any]:
    """Each metric clustered by question, and its mean per context-position bin."""
    per_seq = [sequence_parity(s) for s in seqs]
    metrics = {}
    for metric in METRICS:
        by_q = question_totals(per_seq, metric)
        if any(t.count for t in by_q.values()):
            metrics[metric] = _mean_json(clustered_mean(by_q))
    bins = [
        {"low": b.low, "high": b.high, **{k: _bin_mean(t) for k, t in b.metrics.items()}}
        for b in position_bins(seqs, edges)
    ]
    return {"sequences_from": source, "sequences": len(seqs), "metrics": metrics, "bins": bins}


def _bin_mean(t: Totals) -> dict[str, Any]:
    return {"mean": _bound(t.mean), "tokens": t.count}


@dataclass(frozen=True)
class ParityRun:
    """What the parity phase did: its summary (None: this cell generated) and its cost."""

    summary: dict[str, Any] | None
    sequences: int
    wall_s: float  # the whole phase
    rescore_s: float  # the prefill re-score alone: what one more variant's verdict costs


def parity_phase(
    conf: ParityConf,
    base_url: str,
    keys: tuple[str | None, str | None],
    cell_dir: Path,
    pool: PromptPool | None = None,
) -> ParityRun:
    """Run the parity phase on the cell's server; the summary when another cell's were scored.

    ``pool``: the eval prompts ``parity.prompts`` names (None: random ids).
    """
    started = time.monotonic()
    client = SpeedClient(base_url, keys, conf.request_timeout_s, phase=PHASE)
    own = parity_dir(cell_dir)
    if conf.sequences_from is None:
        sequences = generate_sequences(conf, client, pool)
        _write_jsonl(own / SEQUENCES, sequences)
    else:
        sequences = cast(
            list[SequenceRow], read_jsonl(parity_dir(Path(conf.sequences_from)) / SEQUENCES)
        )
    rescore_started = time.monotonic()
    scores = score_rows(sequences, client, conf.top_k)
    rescore_s = time.monotonic() - rescore_started
    _write_jsonl(own / SCORES, scores)
    greedy_phase(conf, client, parity_prompts(conf, pool), cell_dir)
    out = None
    if conf.sequences_from is None:
        _decode_path(conf, client, pool, cell_dir, (sequences, scores))
        log.info("parity: %d sequences generated and re-scored", len(sequences))
    else:
        _decode_path(conf, client, pool, cell_dir, None)
        out = _write_summary(conf, own, sequences, scores)
    return ParityRun(out, len(sequences), time.monotonic() - started, rescore_s)


def _write_summary(
    conf: ParityConf, own: Path, sequences: list[SequenceRow], scores: list[ScoreRow]
) -> dict[str, Any]:
    """``parity/summary.json``: this cell's re-score against the source cell's own."""
    assert conf.sequences_from is not None
    base = cast(list[ScoreRow], read_jsonl(parity_dir(Path(conf.sequences_from)) / SCORES))
    out = summary(paired(sequences, base, scores), conf.position_bins, conf.sequences_from)
    write_json_atomic(own / SUMMARY, out)
    line = ", ".join(f"{k} {v['estimate']:.3g}" for k, v in out["metrics"].items())
    log.info("parity against %s: %s", conf.sequences_from, line)
    return out


def _decode_path(
    conf: ParityConf,
    client: SpeedClient,
    pool: PromptPool | None,
    cell_dir: Path,
    generated: tuple[list[SequenceRow], list[ScoreRow]] | None,
) -> None:
    """``parity/decode.json`` (``parity.decode_path``): decoding against this server's prefill.

    A baseline reuses its own sequences and re-scores; another cell generates its own from the
    same prompts (one more generation and prefill per sequence).
    """
    if not conf.decode_path:
        return
    if generated is None:
        mine = generate_sequences(conf, client, pool)
        generated = (mine, score_rows(mine, client, conf.top_k))
    seqs = decode_pairs(*generated)
    write_decode_summary(cell_dir, summary(seqs, conf.position_bins, str(cell_dir)))
