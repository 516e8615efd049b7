"""The ``--sim-config`` file: the simulated model, its answer key and the fault flags.

The JSON holds the fields of ``pipeline.config.schema.SimulatedConf`` plus ``answer_key`` (JSONL of
``{"question", "answer", "kind"}``) and ``ledger`` (JSONL written per served completion). It is
read as every config file outside Hydra is (``backends.config_file``), so that a typo stops the
server with the file, the key and the fix named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.config_file import Check, ConfigFileError, checked, load_structured
from pipeline.simserver.aborts import ABORT_STATUSES
from pipeline.simserver.surface import SUPPORTED_VERSIONS

RATE = Check(0.0, 1.0, hint="(a rate: 0.1 = one request in ten)")
# The answers ``pipeline.simserver.model`` writes: an option's letter (``mcq``), a number
# (``numeric``) or a short text such as a list (``text``). The evals' side of this contract is
# ``evals.base.ANSWER_KINDS`` (the server imports nothing of ``evals``;
# tests/unit/test_evals_contract.py holds the two equal).
ANSWER_KINDS = ("mcq", "numeric", "text")


class SimConfigError(ConfigFileError):
    """A ``--sim-config`` or answer-key file that the simulated server cannot use."""


@dataclass(frozen=True)
class Effect:
    """Deltas applied when every ``match`` key equals the cell's value."""

    match: dict[str, Any] = field(default_factory=dict)
    accuracy_delta: float = 0.0
    accept_length_delta: float = 0.0
    # Normal noise of this standard deviation on the logits ``return_logprob`` reads, at context
    # positions from ``logit_from_position`` on (pipeline/simserver/logprobs.py: a perturbation
    # of known KL; 0: the distributions are the baseline's).
    logit_sigma: float = checked(0.0, Check(0.0))
    logit_from_position: int = checked(0, Check(0))
    # Request-level conditions (issue 40; None: every request of a matching cell): the deltas
    # apply only to prompts longer than this many tokens, or only to prompts containing this
    # text (a category's marker, e.g. SPEED-Bench's "[coding]" prefix in a test's rows).
    above_prompt_tokens: int | None = checked(None, Check(0))
    prompt_contains: str | None = None

    @property
    def per_request(self) -> bool:
        """Whether the effect applies per request (a length or text condition), not per cell."""
        return self.above_prompt_tokens is not None or self.prompt_contains is not None

    # Noise on the logits the verify pass reads (a server with speculation only): a prefill
    # re-score does not see it, nor does the same variant with speculation off (issue 39 items
    # 2 and 3), only decode-time logprobs and greedy outputs with speculation do.
    verify_logit_sigma: float = checked(0.0, Check(0.0))
    # Seconds added to every request of a matching cell (cell-level effects only): a slower
    # variant, or one cell of a sweep that a test must catch while it runs.
    latency_s: float = checked(0.0, Check(0.0))


@dataclass(frozen=True)
class LogprobConf:
    """The ``logprobs`` object: the distributions ``return_logprob`` reads (``logprobs.py``)."""

    vocab: int = checked(32000, Check(64))
    candidates: int = checked(8, Check(1, 32))  # ids with a logit of their own per position
    logit_scale: float = checked(2.0, Check(0.0))
    rest_mass: float = checked(0.05, Check(0.0001, 0.5))  # the baseline's mass on the other ids
    # Logit noise drawn anew at every start: an A/A whose two starts are not bit-identical.
    restart_sigma: float = checked(0.0, Check(0.0))


@dataclass(frozen=True)
class FaultFlags:
    """The ``faults`` object: what to break (None or unset: nothing)."""

    reject_message: str | None = None
    crash_at_start: Any = None  # true, or the last traceback line to print
    never_healthy: bool | None = None
    crash_after_requests: int | None = None
    hang_after_requests: int | None = None
    missing_spec_keys: bool | None = None
    latency_s: float | None = None
    serve_instead: dict[str, Any] | None = None  # /server_info keys run with, whatever the argv
    foreign_requests: int | None = None  # requests of "another client" counted beside ours
    busy: bool | None = None  # a request of another client that never finishes: never idle
    exit_after_requests: int | None = None  # the process ends right after the N-th answer
    log_warning: str | None = None  # a line the server logs at WARNING once it starts
    connection_reset_rate: float | None = checked(None, RATE)
    http_5xx_rate: float | None = checked(None, RATE)
    malformed_json_rate: float | None = checked(None, RATE)
    truncation_rate: float | None = checked(None, RATE)
    # SGLang's finish reason "abort", with the body of abort_status (None: a graceful abort,
    # HTTP 200; 400, 500 or 503: the error SGLang answers with; pipeline/simserver/aborts.py)
    abort_rate: float | None = checked(None, RATE)
    abort_status: int | None = None  # one of ABORT_STATUSES
    rate_limit_rate: float | None = checked(None, RATE)  # HTTP 429 with Retry-After
    retry_after: str | None = "1"  # seconds or an HTTP date; None: a 429 without the header
    stream_error_rate: float | None = checked(None, RATE)  # data: {"error": ...} (streams only)
    invalid_utf8_rate: float | None = checked(None, RATE)  # a reply that is not UTF-8
    missing_meta_info_rate: float | None = checked(None, RATE)  # a 200 without meta_info/sglext


@dataclass(frozen=True)
class AnswerEntry:
    """One answer-key row."""

    question: str
    answer: str
    kind: str  # one of ANSWER_KINDS


@dataclass(frozen=True)
class SimConfig:
    """A validated ``--sim-config`` file."""

    sglang_version: str = checked("0.5.19", Check(choices=SUPPORTED_VERSIONS))
    accuracy: float = checked(0.72, Check(0.0, 1.0))
    accept_length: float = 2.6
    effects: list[Effect] = field(default_factory=list)
    mean_completion_tokens: int = checked(160, Check(1))
    latency_s: float = 0.0
    prefill_s_per_1k_tokens: float = checked(0.002, Check(0.0))
    timing_model: str | None = None  # a table of pipeline.simserver.timing (None: off)
    timing_jitter: float = checked(0.0, Check(0.0, 0.5))
    startup_delay_s: float = 0.5
    shutdown_s: float = checked(0.0, Check(0.0))  # from SIGTERM to exit (live SGLang: ~7 s)
    seed: int = checked(0, Check(0))
    # 1 - the intraclass correlation of a question's repeats (pipeline.simserver.sampling);
    # 0: every identical prompt answered alike, as before.
    sampling_spread: float = checked(0.0, Check(0.0, 1.0))
    prompt_tokens: str = checked("words", Check(choices=("words", "bytes")))
    faults: FaultFlags = field(default_factory=FaultFlags)
    logprobs: LogprobConf = field(default_factory=LogprobConf)
    answer_key: str | None = None
    ledger: str | None = None


def load_sim_config(path: str | Path) -> SimConfig:
    """Read and check a ``--sim-config`` JSON file.

    Raises:
        SimConfigError: naming the file, the key and what to write instead.
    """
    where = f"--sim-config {path}"
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SimConfigError(f"{where}: cannot read a JSON object: {exc}") from exc
    conf = load_structured(SimConfig, raw, where, error=SimConfigError)
    status = conf.faults.abort_status
    if status is not None and status not in ABORT_STATUSES:
        allowed = ", ".join(map(str, ABORT_STATUSES))
        raise SimConfigError(
            f"{where}: faults.abort_status is {status}; use null (a graceful abort) or {allowed}"
        )
    for index, effect in enumerate(conf.effects):
        if not effect.match and not effect.per_request:
            raise SimConfigError(
                f"{where}: effects[{index}].match is empty; expected "
                "{'match': {key: value}, 'accuracy_delta': x}"
            )
    return conf


def load_answer_key(path: str | Path) -> list[AnswerEntry]:
    """Read the answer key JSONL (one ``{"question", "answer", "kind"}`` object per line).

    Raises:
        SimConfigError: naming the file, the line and the bad field.
    """
    entries = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise SimConfigError(f"answer_key {path}: cannot read: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            entries.append(_answer_entry(line, f"answer_key {path} line {number}"))
    return entries


def _answer_entry(line: str, at: str) -> AnswerEntry:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SimConfigError(f"{at}: not JSON: {exc}") from exc
    if not isinstance(row, dict):
        raise SimConfigError(f"{at}: expected an object with question, answer, kind")
    for key in ("question", "answer"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise SimConfigError(f"{at}: field {key!r} must be a non-empty string")
    if row.get("kind") not in ANSWER_KINDS:
        raise SimConfigError(
            f"{at}: field 'kind' is {row.get('kind')!r}; the simulated server answers only "
            f"{' or '.join(map(repr, ANSWER_KINDS))} (evals/base.py ANSWER_KINDS says what each is)"
        )
    return AnswerEntry(question=row["question"], answer=row["answer"].strip(), kind=row["kind"])
