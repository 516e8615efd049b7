"""MT-Bench-style multi-turn conversations, sent mainly for speculative accept rates.

Each conversation is a list of user turns (MT-Bench has two). Turn 1 is sent alone; turn k + 1 is
sent with the model's own answers to turns 1..k in the history, as MT-Bench's answer generation
does, so the second turn measures acceptance on a long, self-generated context. Nothing is graded
(MT-Bench's scores come from an LLM judge, which is out of scope): accuracy is n/a and only the
requests, tokens and speculative statistics count. A turn whose earlier turn failed is not sent
and is counted as an error (``previous_turn_failed``), never dropped silently.

Rows: ``prompt`` (``HuggingFaceH4/mt_bench_prompts``, split ``train``) or ``turns`` (FastChat's
``question.jsonl``, ``lighteval/mt-bench``): a list of strings; ``category`` is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypedDict

from evals.base import (
    MULTI_TURN,
    AnswerKeyEntry,
    AnswerKind,
    EvalPrompt,
    MultiTurnEval,
    QuestionText,
    RowsEval,
    RunShape,
    question_id,
)
from evals.eval_conf import EvalConf
from evals.rows import first_present, row_error, skip_duplicate, text_list
from evals.sample_line import ChatMessage

TURN_COLUMNS = ("prompt", "turns")


def turn_id(conversation: str, turn: int) -> str:
    """The question id of turn ``turn`` (from 1) of a conversation: unique per turn."""
    return question_id(f"{conversation}#turn{turn}")


class MtBenchEval(RowsEval):
    """Multi-turn conversations; turns after the first follow the model's earlier answers."""

    answer_kinds: tuple[AnswerKind, ...] = ()  # ungraded: no answer key
    graded = False
    shape: RunShape = MULTI_TURN
    columns: ClassVar[tuple[str, ...]] = ()  # the turns: column "prompt" or "turns"

    def __init__(self, name: str, conf: EvalConf, rows: Sequence[dict[str, Any]]) -> None:
        """Build the conversations from ``rows`` (see ``RowsEval``)."""
        super().__init__(name, conf)
        self.conversations = _conversations(rows, conf, name)
        # question id -> (conversation, turn from 1), to rebuild histories from sample records
        self._turn_of = {
            turn_id(c["id"], t): (c, t)
            for c in self.conversations
            for t in range(1, len(c["turns"]) + 1)
        }

    def prompts(self) -> list[EvalPrompt]:
        """The first turn of every conversation at every repeat (later turns: ``next_turns``)."""
        return [
            self._prompt(c, 1, repeat, []) for repeat in range(self.conf.repeats)
            for c in self.conversations
        ]  # fmt: skip

    def next_turns(
        self, records: Iterable[Mapping[str, Any]]
    ) -> tuple[list[EvalPrompt], list[EvalPrompt]]:
        """The turns that can be sent now, and those blocked by a failed earlier turn.

        Args:
            records: sample records so far (any turns, any repeats; the last per key wins).

        Returns:
            ``(ready, blocked)``: the next turn of each conversation and repeat whose earlier
            turns all have an answer and which has no record yet; and those whose previous turn
            ended in an error (send nothing, record ``previous_turn_failed``).
        """
        by_key = {(r["question_id"], r["repeat"]): r for r in records}
        ready: list[EvalPrompt] = []
        blocked: list[EvalPrompt] = []
        for (qid, repeat), record in by_key.items():
            found = self._turn_of.get(qid)
            if found is None:
                continue
            conversation, turn = found
            if turn == len(conversation["turns"]):
                continue
            follow = turn_id(conversation["id"], turn + 1)
            if (follow, repeat) in by_key:
                continue
            history = self._history(conversation, turn, repeat, by_key)
            target = ready if history is not None and record.get("error_kind") is None else blocked
            target.append(self._prompt(conversation, turn + 1, repeat, history or []))
        return ready, blocked

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Not graded: no extraction, never correct."""
        return None, False

    def answer_key(self) -> list[AnswerKeyEntry]:
        """None: the simulated server answers unknown prompts with generic text."""
        return []

    def _history(
        self,
        conversation: Conversation,
        turns_done: int,
        repeat: int,
        by_key: Mapping[tuple[str, int], Mapping[str, Any]],
    ) -> list[ChatMessage] | None:
        history: list[ChatMessage] = []
        for turn in range(1, turns_done + 1):
            record = by_key.get((turn_id(conversation["id"], turn), repeat))
            if record is None or record.get("error_kind") is not None:
                return None
            history.append({"role": "user", "content": conversation["turns"][turn - 1]})
            # A truncated or reasoning-only answer is still what the model said.
            history.append({"role": "assistant", "content": record.get("response") or ""})
        return history

    def _prompt(
        self, conversation: Conversation, turn: int, repeat: int, history: list[ChatMessage]
    ) -> EvalPrompt:
        user: ChatMessage = {"role": "user", "content": conversation["turns"][turn - 1]}
        return EvalPrompt(
            question_id=turn_id(conversation["id"], turn),
            repeat=repeat,
            messages=[*history, user],
            answer="",
            meta={
                "conversation": conversation["id"],
                "turn": turn,
                "category": conversation["category"],
            },
            question=QuestionText(f"Turn {turn}: {user['content']}"),
        )


class Conversation(TypedDict):
    """A dataset row made a conversation: its id, the user's turns and its category."""

    id: str
    turns: list[str]
    category: str


def _conversations(rows: Sequence[dict[str, Any]], conf: EvalConf, name: str) -> list[Conversation]:
    conversations: list[Conversation] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        column = first_present(row, TURN_COLUMNS)
        if column is None:
            raise row_error(
                conf.dataset, number, "prompt", "no turns (column 'prompt' or 'turns')",
                'Give the user turns as a list of strings, e.g. ["first turn", "second turn"].',
            )  # fmt: skip
        turns = text_list(row[column], conf.dataset, number, column)
        cid = question_id("\n\n".join(turns))
        if not skip_duplicate(seen, cid, name, number):
            category = str(row.get("category") or "")
            conversations.append({"id": cid, "turns": turns, "category": category})
    return conversations


_CHECKED: type[MultiTurnEval] = MtBenchEval  # mypy checks the class against the eval protocol
