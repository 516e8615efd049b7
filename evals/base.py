"""The eval interface and the registry that maps ``EvalConf.kind`` to an implementation."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict, TypeGuard

from evals.datasets import load_rows
from evals.eval_conf import ClientConf, EvalConf, SamplingConf
from evals.rows import check_repeats
from evals.sample_line import ChatMessage, QuestionJson, SampleJson

# kind -> "module:factory". Modules are imported on use, so an eval's heavy imports stay lazy.
# Adding an eval is one line here, e.g. "gsm8k": "evals.gsm8k:Gsm8kEval".
_REGISTRY: dict[str, str] = {
    "gpqa": "evals.gpqa:GpqaEval",
    "gsm8k": "evals.gsm8k:Gsm8kEval",
    "mmlu": "evals.mmlu:MmluEval",
    "mtbench": "evals.mtbench:MtBenchEval",
    "lm_eval": "evals.lm_eval_bridge:LmEvalEval",
    "longctx": "evals.longctx:LongCtxEval",
    "speed_bench": "evals.speed_bench:SpeedBenchEval",
}


# The answers the simulated SGLang server can give, the contract between an eval's
# ``answer_key()`` and ``pipeline.simserver.model`` (which keeps its own copy, checked equal by
# tests/unit/test_evals_contract.py, because the server imports nothing of ``evals``):
# - ``mcq``: ``answer`` is the text of one of the lettered options shown in the prompt
#   (``A) text`` / ``(A) text`` / ``A. text``), or the letter itself; the server ends its reply
#   with ``Answer: <letter>``.
# - ``numeric``: ``answer`` is a number; the server ends its reply with
#   ``The final answer is <number>`` (a wrong reply shifts the number).
# - ``text``: ``answer`` is a short text (a list such as ``4829173, 1180347``); the server ends its
#   reply with ``The final answer is <text>`` (a wrong reply changes its last item).
# A yes/no eval is ``mcq`` with the options ``A) yes`` / ``B) no`` in its prompt. Any other kind
# is refused where the eval is built (``make_eval``) and by the server when it reads the key.
AnswerKind = Literal["mcq", "numeric", "text"]
ANSWER_KINDS: tuple[AnswerKind, ...] = ("mcq", "numeric", "text")


class AnswerKeyEntry(TypedDict):
    """One question of an eval's answer key, as the simulated server reads it."""

    question: str  # text the prompt contains (its first line finds the entry)
    answer: str
    kind: AnswerKind


@dataclass(frozen=True)
class QuestionText:
    """What a reader of the report needs to see of a question, whatever the repeat.

    Written once per question into its samples (``samples/<eval>.jsonl`` key ``question`` of the
    repeat-0 line), so that the report shows the question instead of its hash id.
    """

    text: str  # the question (a multi-turn eval: this turn's user message)
    options: tuple[str, ...] = ()  # multiple choice: in the dataset's order, see ``permuted``
    gold: str | None = None  # the right answer as a reader reads it (an option's text, a number)
    # True: each repeat's prompt shows the options reordered by its sample's ``permutation``
    # (position i shows option permutation[i]), so a letter means another option per repeat.
    permuted: bool = False

    def as_json(self) -> QuestionJson:
        """The sample line's ``question`` object (empty fields left out, to keep samples small).

        A text longer than ``KEPT_CHARS`` (a long-context haystack) keeps its start and its end,
        where such a prompt asks its question, and says how much it left out.
        """
        out: QuestionJson = {"text": kept_text(self.text)}
        if self.options:
            out["options"] = [kept_text(o) for o in self.options]
        if self.gold is not None:
            out["gold"] = kept_text(self.gold)
        if self.permuted:
            out["permuted"] = True
        return out


# Of a question's text, the characters a sample line keeps: a multiple-choice or word problem
# fits whole, while a retrieval prompt's haystack (synth_retrieval: up to 17k tokens), written
# into every cell's samples, would more than double them for a part no reader triages by.
KEPT_CHARS = 3000
KEPT_TAIL = 800


def kept_text(text: str) -> str:
    """``text``, or its start and end around a line saying how many characters were left out."""
    if len(text) <= KEPT_CHARS:
        return text
    head = KEPT_CHARS - KEPT_TAIL
    left_out = len(text) - KEPT_CHARS
    return f"{text[:head]}\n[... {left_out:,} characters left out ...]\n{text[-KEPT_TAIL:]}"


@dataclass(frozen=True)
class EvalPrompt:
    """One request of an eval: a question at one repeat."""

    question_id: str  # stable hash of the question text
    repeat: int
    messages: list[ChatMessage]
    answer: str  # the correct letter / number
    meta: dict[str, Any]  # permutation etc.
    question: QuestionText | None = None  # what the report shows of it (None: its hash id)


# How the runner drives an eval: each prompt once (``single_turn``); turn by turn, later turns
# built from the model's answers (``multi_turn``: ``MultiTurnEval``); or handed whole to a harness
# that builds, sends and grades its own requests (``harness``: ``HarnessEval``).
RunShape = Literal["single_turn", "multi_turn", "harness"]
SINGLE_TURN: RunShape = "single_turn"
MULTI_TURN: RunShape = "multi_turn"
HARNESS: RunShape = "harness"


@dataclass(frozen=True)
class RequestTarget:
    """The server an eval is sent to and the settings every one of its requests uses."""

    base_url: str
    model: str  # the served model name
    client: ClientConf
    sampling: SamplingConf
    chat_template_kwargs: dict[str, Any]


class EvalRunError(RuntimeError):
    """A harness could not run its task; the message says what failed and how to fix it."""


@dataclass(frozen=True)
class HarnessRun:
    """What one harness run produced."""

    records: list[SampleJson]  # one per (document, repeat), samples/<eval>.jsonl format
    lm_eval: dict[str, Any]  # evals.<name>.lm_eval of result.json
    graded: bool  # False when the primary metric is not 0/1 (then only the harness's figures count)


class Eval(Protocol):
    """What the cell job needs from an eval."""

    name: str  # its key under ``evals`` (sample files, result blocks)
    label: str  # how reports name it
    graded: bool  # False: answers are not graded (accuracy n/a; only requests and accept count)
    shape: RunShape  # how the runner drives it
    answer_kinds: tuple[AnswerKind, ...]  # the kinds its answer_key() holds (): none

    def prompts(self) -> list[EvalPrompt]:
        """All (question, repeat) prompts, in a deterministic order."""
        ...

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Extract the answer from ``content`` and say whether it is correct."""
        ...

    def answer_key(self) -> list[AnswerKeyEntry]:
        """One entry per question, for the simulated server (kinds among ``answer_kinds``)."""
        ...


class RowsEval:
    """What every eval built from dataset rows shares: its name, label and config."""

    graded = True
    shape: RunShape = SINGLE_TURN

    def __init__(self, name: str, conf: EvalConf) -> None:
        """Check the config and keep it; a subclass then builds its questions from rows.

        A subclass takes ``(name, conf, rows)``: rows as ``evals.datasets.load_rows`` returns
        them (its ``columns`` present; see ``make_eval``), or literal rows in a test.

        Args:
            name: the eval's key under ``evals``.
            conf: its config.
        """
        check_repeats(name, conf.repeats)
        self.name = name
        self.label = conf.label or name
        self.conf = conf


class MultiTurnEval(Eval, Protocol):
    """An eval whose later turns depend on the model's earlier answers (``shape: multi_turn``)."""

    def next_turns(
        self, records: Iterable[Mapping[str, Any]]
    ) -> tuple[list[EvalPrompt], list[EvalPrompt]]:
        """(turns ready to send, turns blocked by a failed earlier turn)."""
        ...


class HarnessEval(Eval, Protocol):
    """An eval a harness runs whole (``shape: harness``): ``prompts`` and ``grade`` are unused."""

    def run(self, target: RequestTarget, samples_dir: Path) -> HarnessRun:
        """Run the task against ``target``, writing the harness's own log under ``samples_dir``.

        Raises:
            EvalRunError: the harness failed.
        """
        ...


def is_multi_turn(ev: Eval) -> TypeGuard[MultiTurnEval]:
    """Whether the runner sends ``ev`` turn by turn."""
    return ev.shape == MULTI_TURN


def is_harness(ev: Eval) -> TypeGuard[HarnessEval]:
    """Whether a harness runs ``ev`` whole."""
    return ev.shape == HARNESS


def question_id(text: str) -> str:
    """Stable short id of a question: the first 16 hex digits of its SHA-256.

    Args:
        text: the question text as it appears in the prompt.

    Returns:
        16 lowercase hex characters.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def known_kinds() -> list[str]:
    """The eval kinds ``make_eval`` accepts."""
    return sorted(_REGISTRY)


def check_answer_kinds(what: str, kinds: Iterable[str]) -> None:
    """Refuse answer kinds the simulated server cannot answer (it would score them 0).

    Args:
        what: the eval or answer-key entry, as the message names it.
        kinds: the kinds it states.

    Raises:
        ValueError: naming the unknown kinds, the known ones and the fix.
    """
    unknown = [kind for kind in kinds if kind not in ANSWER_KINDS]
    if unknown:
        raise ValueError(
            f"{what}: answer kind {', '.join(map(repr, unknown))} is unknown; the simulated "
            f"server answers {' or '.join(map(repr, ANSWER_KINDS))} (evals/base.py "
            "ANSWER_KINDS): state the answers as one of them (yes/no: 'mcq' with the options "
            "A) yes / B) no in the prompt), or add the kind there and to "
            "pipeline/simserver/model.py"
        )


def make_eval(name: str, conf: EvalConf) -> Eval:
    """Build the eval named ``name`` from its config, loading its dataset's rows.

    Rows are loaded here, apart from prompting and grading: an eval class takes
    ``(name, conf, rows)``, so a test builds one from literal rows. A harness eval
    (``shape: harness``) reads its own documents and takes ``(name, conf)``.

    Args:
        name: the eval's key under ``evals`` (used for sample files and reports).
        conf: its config; ``conf.kind`` selects the implementation.

    Returns:
        The eval, with its rows loaded.

    Raises:
        ValueError: ``conf.kind`` is not registered, or its class states an answer kind the
            simulated server cannot answer (``ANSWER_KINDS``).
        evals.datasets.DatasetError: the rows cannot be loaded.
    """
    target = _REGISTRY.get(conf.kind)
    if target is None:
        raise ValueError(f"evals.{name}.kind={conf.kind!r} is unknown; use one of {known_kinds()}.")
    module_name, factory = target.split(":")
    cls = getattr(importlib.import_module(module_name), factory)
    check_answer_kinds(f"evals.{name} (kind {conf.kind}, {target})", cls.answer_kinds)
    if cls.shape == HARNESS:
        harness: Eval = cls(name, conf)
        return harness
    check_repeats(name, conf.repeats)  # before a download that would be wasted
    if getattr(cls, "generated", False):  # questions written by the eval itself (kind: longctx)
        made: Eval = cls(name, conf)
        return made
    built: Eval = cls(name, conf, load_rows(conf.dataset, cls.columns))
    return built
