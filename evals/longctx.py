"""The generated long-context eval (``kind: longctx``): RULER-style tasks at configured lengths.

Questions come from ``evals.longctx_tasks`` (a pure function of the eval's seed, task, length and
index), counted in the served model's tokens (``evals.longctx_tokens``), not from a dataset. The
grade is exact: the text after the last ``The final answer is`` must hold the gold items, no more
and no fewer (in order for ``niah_multiquery``, as a set otherwise). ``context_refusals`` says
which lengths a server's context cannot hold, so a cell refuses them before its first request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from evals.base import (
    AnswerKeyEntry,
    AnswerKind,
    Eval,
    EvalPrompt,
    QuestionText,
    RowsEval,
    question_id,
)
from evals.eval_conf import EvalConf, LongCtxConf
from evals.longctx_cache import cached_samples
from evals.longctx_tasks import FINAL, Sample, sample, worked_reply
from evals.longctx_tokens import counter_for

_FINAL = re.compile(re.escape(FINAL), re.IGNORECASE)
_ITEM_SPLIT = re.compile(r"\s*(?:,|;|\band\b)\s*|\s+")
_STRIP = " \t*_`'\"()[]{}<>.:"


def final_items(content: str | None) -> tuple[str, ...] | None:
    """The items after the last ``The final answer is`` on its line, or None without one."""
    if not content:
        return None
    found = list(_FINAL.finditer(content))
    if not found:
        return None
    line = content[found[-1].end() :].split("\n", 1)[0]
    items = (part.strip(_STRIP) for part in _ITEM_SPLIT.split(line.strip()))
    return tuple(item for item in items if item)


def is_correct(items: tuple[str, ...] | None, gold: tuple[str, ...], ordered: bool) -> bool:
    """Exactly the gold items: in order when ``ordered``, else as a set with no repeats."""
    if items is None:
        return False
    if ordered:
        return items == gold
    return len(items) == len(gold) and set(items) == set(gold)


def settings(name: str, conf: EvalConf) -> LongCtxConf:
    """The eval's ``longctx`` node, checked.

    Raises:
        ValueError: the node is missing, or a length or count is not positive.
    """
    node = conf.longctx
    if node is None:
        raise ValueError(
            f"evals.{name}: kind longctx needs a longctx node (task, lengths, samples); "
            "see conf/evals/longctx.yaml"
        )
    bad = [n for n in node.lengths if n < 1] + ([node.samples] if node.samples < 1 else [])
    if not node.lengths or bad:
        raise ValueError(
            f"evals.{name}.longctx: lengths must be a non-empty list of positive token counts "
            f"and samples positive (got lengths={list(node.lengths)}, samples={node.samples})"
        )
    return node


class LongCtxEval(RowsEval):
    """RULER-style generated questions at each configured length."""

    answer_kinds: tuple[AnswerKind, ...] = ("text",)
    columns: ClassVar[tuple[str, ...]] = ()
    generated = True  # make_eval builds it without rows

    def __init__(self, name: str, conf: EvalConf) -> None:
        """Generate every question (see the module's docstring).

        Raises:
            ValueError: bad settings, an unknown task, or a length too short for its question.
            evals.chat_tokens.TokenizerError: ``hf`` counting without a local tokenizer.
        """
        super().__init__(name, conf)
        node = settings(name, conf)
        self.task = node.task
        counter = counter_for(node.tokens, node.server_kind, node.tokenizer_path or node.model_path)
        self.counted_by = counter.name
        parts = {"task": node.task, "lengths": list(node.lengths), "samples": node.samples,
                 "seed": conf.seed, "counter": counter.identity}  # fmt: skip
        self.samples: list[Sample] = cached_samples(parts, lambda: [
            sample(node.task, length, conf.seed, index, counter)
            for length in node.lengths
            for index in range(node.samples)
        ])  # fmt: skip

    def prompts(self) -> list[EvalPrompt]:
        """Every question at every repeat, repeat-major; ``meta`` holds its length bin."""
        return [
            EvalPrompt(
                question_id=question_id(s.text),
                repeat=repeat,
                messages=[{"role": "user", "content": s.text}],
                answer=", ".join(s.gold),
                meta={
                    "task": s.task,
                    "length": s.length,
                    "prompt_tokens": s.tokens,
                    "counted_by": self.counted_by,
                    "ordered": s.ordered,
                    "depths": [round(d, 4) for d in s.depths],
                },
                question=QuestionText(s.text, gold=", ".join(s.gold)),
            )
            for repeat in range(self.conf.repeats)
            for s in self.samples
        ]

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """The final answer's items, and whether they are exactly the gold ones."""
        items = final_items(content)
        gold = tuple(prompt.answer.split(", "))
        answer = None if items is None else ", ".join(items)
        return answer, is_correct(items, gold, bool(prompt.meta.get("ordered")))

    def answer_key(self) -> list[AnswerKeyEntry]:
        """``kind: text`` entries keyed by each prompt's end (its last haystack line, question)."""
        return [{"question": s.key, "answer": ", ".join(s.gold), "kind": "text"}
                for s in self.samples]  # fmt: skip

    def longest(self) -> int:
        """The longest configured length (its prompts are at most this many tokens)."""
        return max(s.length for s in self.samples)

    def training_text(self) -> list[tuple[str, str]]:
        """(user message, the reply graded correct) per question: issue 41's training rows."""
        return [(s.text, worked_reply(s)) for s in self.samples]


def overlong(name: str, lengths: list[int], context_len: int, max_tokens: int) -> str | None:
    """Why eval ``name``'s longest prompts and their answers exceed ``context_len`` (None: fit).

    Args:
        name: the eval's key under ``evals``.
        lengths: its configured lengths (a prompt is at most its length).
        context_len: the server's context length in tokens.
        max_tokens: the answer budget each request asks for.
    """
    too_long = sorted(n for n in set(lengths) if n + max_tokens > context_len)
    if not too_long:
        return None
    fits = sorted(n for n in set(lengths) if n not in too_long)
    return (
        f"evals.{name}: prompts of up to {too_long[-1]:,} tokens plus {max_tokens} answer tokens "
        f"exceed the server's context length of {context_len:,} (lengths {too_long} do not "
        f"fit): set model.context_length={too_long[-1] + max_tokens} or more (the model must "
        f"serve it), or drop them: evals.{name}.longctx.lengths=[{','.join(map(str, fits))}]"
    )


def context_refusals(
    evals: Mapping[str, Eval], context_len: int, max_tokens: Mapping[str, int]
) -> list[str]:
    """``overlong``'s line for each long-context eval of a cell that its server cannot hold.

    Args:
        evals: the cell's evals by name (only ``kind: longctx`` ones are looked at).
        context_len: the server's context length in tokens.
        max_tokens: each eval's answer budget, by name.
    """
    lines = [
        overlong(name, [s.length for s in ev.samples], context_len, max_tokens[name])
        for name, ev in evals.items()
        if isinstance(ev, LongCtxEval)
    ]
    return [line for line in lines if line is not None]


_CHECKED: type[Eval] = LongCtxEval
