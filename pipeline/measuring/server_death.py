"""A server that stops answering in the middle of a cell: say so plainly, lose nothing.

The message names the eval and how far it got ("the server stopped answering during gpqa after
180 of 232 requests"), with the exit code and log tail when the pipeline started the server; every
eval whose samples are all answered on disk is summarised from them, so a server that died after
the last answer still leaves the cell's figures in ``result.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals.accounting import summarize_records
from evals.base import Eval, is_harness
from pipeline.measuring.accept_windows import NOT_READ, Window, window_accept
from pipeline.results.cell_paths import samples_path
from pipeline.results.eval_block import EvalHead, eval_block
from pipeline.results.result_draft import ResultDraft
from pipeline.results.resume import answered_samples
from pipeline.serving.server import RunningServer, probe_health, tail

Head = Callable[[str, Eval], EvalHead]
STOPPED = "server_died"


def server_answers(server: RunningServer) -> bool:
    """Whether the server process lives (when we started it) and its HTTP port answers."""
    if server.process is not None and server.process.poll() is not None:
        return False
    return probe_health(server.base_url, timeout_s=10.0, path="/health") is not None


def stopped_message(server: RunningServer, eval_name: str, answered: int, total: int | None) -> str:
    """One line on where the server stopped, and what was kept."""
    counts = f"after {answered} of {total} requests" if total else f"after {answered} requests"
    message = f"the server stopped answering during {eval_name} {counts}"
    if server.process is not None:
        code = server.process.poll()
        state = f"exited with code {code}" if code is not None else "is running but not answering"
        message += f" (its process {state}; log: {server.log_path})"
    else:
        message += f" ({server.base_url} no longer answers: was it stopped or restarted?)"
    return message + "; the answered samples are kept and a rerun asks only the rest"


def log_tail(server: RunningServer) -> str:
    """The end of the server log, when the pipeline started the server."""
    return tail(server.log_path) if server.process is not None else ""


def answered_count(cell_dir: Path, name: str) -> int:
    """Answered samples of eval ``name`` on disk."""
    return len(answered_samples(samples_path(cell_dir, name)))


def expected_count(ev: Eval) -> int | None:
    """Requests an eval sends in all (None where lm-eval decides)."""
    return None if is_harness(ev) else len(ev.prompts())


def summarise_from_disk(
    evals: dict[str, Eval], cell_dir: Path, result: ResultDraft, head: Head, speculative: bool
) -> list[str]:
    """Summarise every eval whose samples are all answered on disk; drop incomplete blocks.

    Returns:
        The names of the evals summarised from disk.
    """
    done = []
    for name, ev in evals.items():
        if result.eval_measured(name):
            continue  # measured to the end (a sequential eval may stop early), server figures too
        total = expected_count(ev)
        records = answered_samples(samples_path(cell_dir, name))
        if total is None or total == 0 or len(records) < total:
            result.drop_eval(name)  # incomplete: its samples wait for a rerun
            continue
        block = eval_block(
            head(name, ev),
            summarize_records(records, ev.graded),
            resumed_samples=len(records),
            summarised_from="samples on disk (the server stopped answering)",
            accept=window_accept(records, Window([], None, NOT_READ), speculative, 0.10),
        )
        result.set_eval(name, block)
        done.append(name)
    return done
