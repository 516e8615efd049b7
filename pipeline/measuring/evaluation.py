"""Run one eval of a cell against its server, appending each sample to disk as it completes.

Single-turn evals send each prompt once. Multi-turn evals (``shape: multi_turn``, e.g. MT-Bench) are
sent turn by turn: all first turns, then every second turn whose first turn was answered (its
answer in the history), and so on; a turn whose earlier turn failed is recorded as an error
(``previous_turn_failed``) instead of being sent or dropped.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.base import Eval, EvalPrompt, RequestTarget, is_multi_turn
from evals.client import ChatClient, RequestOutcome, build_chat_payload
from evals.json_text import strict_dumps
from evals.metrics import sample_record
from evals.sample_line import SampleJson

PREVIOUS_TURN_FAILED = "previous_turn_failed"


@dataclass(frozen=True)
class EvalRun:
    """One eval of a cell as the runner sends it: the eval, where to, and its samples file."""

    ev: Eval
    target: RequestTarget
    out: Path  # samples/<eval>.jsonl, appended to


def with_meta(record: SampleJson, prompt: EvalPrompt) -> SampleJson:
    """Add the prompt's meta (turn, subject, ...) and, on repeat 0, its question to its record.

    The permutation has its own key. The question (``question``: text, options, gold) is what
    the report's "Questions that changed" view shows; it is the same at every repeat, so only the
    repeat-0 line carries it (every run sends repeat 0, a sequential one in its first round).
    """
    extra = {k: v for k, v in prompt.meta.items() if k != "permutation"}
    if extra:
        record["meta"] = extra
    if prompt.repeat == 0 and prompt.question is not None:
        record["question"] = prompt.question.as_json()
    return record


def run_eval(run: EvalRun, prompts: list[EvalPrompt]) -> tuple[list[SampleJson], float]:
    """Send every prompt, grade each answer and append its sample line to ``run.out``.

    A truncated answer (``finish_reason == "length"``) is never graded correct, whatever it says.

    Returns:
        The sample records (in completion order) and the wall time in seconds.
    """
    ev, target, out = run.ev, run.target, run.out
    out.parent.mkdir(parents=True, exist_ok=True)
    records: list[SampleJson] = []
    started = time.monotonic()
    with out.open("a", encoding="utf-8") as fh:

        def on_done(prompt: EvalPrompt, outcome: RequestOutcome) -> None:
            result = outcome.result
            extracted, correct = ev.grade(prompt, result.content) if result else (None, False)
            if result is not None and result.finish_reason == "length":
                correct = False
            record = with_meta(sample_record(prompt, outcome, extracted, correct), prompt)
            fh.write(strict_dumps(record) + "\n")
            fh.flush()
            records.append(record)

        def payload_of(prompt: EvalPrompt) -> dict[str, Any]:
            return build_chat_payload(
                prompt.messages,
                target.sampling,
                target.model,
                target.chat_template_kwargs,
                target.client.stream,
            )

        async def go() -> None:
            async with ChatClient(target.base_url, target.model, target.client) as chat:
                await chat.run(prompts, payload_of, on_done, desc=ev.name)

        asyncio.run(go())
    return records, time.monotonic() - started


def run_turns(
    run: EvalRun, first: list[EvalPrompt], kept: list[SampleJson]
) -> tuple[list[SampleJson], float]:
    """Send a multi-turn eval turn by turn (``first``: the first turns still to send).

    Args:
        run: the eval (``shape: multi_turn``; ``next_turns`` builds each later turn from the
            records so far), its target and samples file.
        first: first-turn prompts not answered yet.
        kept: records of an earlier run of the cell (resume); their answers are reused.

    Returns:
        The new records (every turn) and the wall time in seconds.
    """
    ev = run.ev
    if not is_multi_turn(ev):
        raise TypeError(f"eval {ev.name} has shape {ev.shape!r}, not multi_turn")
    started = time.monotonic()
    new: list[SampleJson] = []
    todo = first
    while True:
        if todo:
            new += run_eval(run, todo)[0]
        todo, blocked = ev.next_turns([*kept, *new])
        if blocked:
            new += write_records(run.out, [blocked_record(p) for p in blocked])
        if not todo and not blocked:
            return new, time.monotonic() - started


def blocked_record(prompt: EvalPrompt) -> SampleJson:
    """The error record of a turn not sent because an earlier turn of it failed."""
    outcome = RequestOutcome(
        result=None,
        error_kind=PREVIOUS_TURN_FAILED,
        error="an earlier turn of this conversation failed, so this turn was not sent",
        status=None,
        attempts=0,
        latency_s=0.0,
    )
    return with_meta(sample_record(prompt, outcome, None, False), prompt)


def write_records(out: Path, records: list[SampleJson], mode: str = "a") -> list[SampleJson]:
    """Write sample records to ``out`` (append by default; ``mode="w"`` replaces the file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open(mode, encoding="utf-8") as fh:
        for record in records:
            fh.write(strict_dumps(record) + "\n")
    return records
