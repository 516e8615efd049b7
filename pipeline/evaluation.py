"""Run one eval of a cell against its server, appending each sample to disk as it completes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from evals.base import Eval, EvalPrompt
from evals.client import ChatClient, RequestOutcome, build_chat_payload
from evals.config import ClientConf, SamplingConf
from evals.metrics import sample_record


def samples_path(cell_dir: Path, eval_name: str) -> Path:
    """Where the per-request lines of an eval go."""
    return cell_dir / "samples" / f"{eval_name}.jsonl"


def run_eval(
    ev: Eval,
    prompts: list[EvalPrompt],
    base_url: str,
    model: str,
    client: ClientConf,
    sampling: SamplingConf,
    chat_template_kwargs: dict[str, Any],
    out: Path,
) -> tuple[list[dict[str, Any]], float]:
    """Send every prompt, grade each answer and append its sample line to ``out``.

    A truncated answer (``finish_reason == "length"``) is never graded correct, whatever it says.

    Returns:
        The sample records (in completion order) and the wall time in seconds.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    started = time.monotonic()
    with out.open("a", encoding="utf-8") as fh:

        def on_done(prompt: EvalPrompt, outcome: RequestOutcome) -> None:
            result = outcome.result
            extracted, correct = ev.grade(prompt, result.content) if result else (None, False)
            if result is not None and result.finish_reason == "length":
                correct = False
            record = sample_record(prompt, outcome, extracted, correct)
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            records.append(record)

        def payload_of(prompt: EvalPrompt) -> dict[str, Any]:
            return build_chat_payload(
                prompt.messages, sampling, model, chat_template_kwargs, client.stream
            )

        async def go() -> None:
            async with ChatClient(base_url, model, client) as chat:
                await chat.run(prompts, payload_of, on_done, desc=ev.name)

        asyncio.run(go())
    return records, time.monotonic() - started
