"""Real prompts for the speed phase (``speed.prompts=eval:NAME``): an eval's own, as token ids.

Why: the skipped share shown beside a skip-softmax speed gain is counted on an eval's prompts
(``benchmarks/live_h200/skip_fraction.py``); a gain timed on random token ids is of other inputs,
whose attention need not concentrate alike (dummy weights: all tiles or none skipped; the trained
model at 4,089 tokens: about as many as on a retrieval prompt, ``skip_fraction.py --random-ids``).
With ``eval:NAME`` each request is a prompt of that eval as the cell sends it (the chat template
applied by the model's tokenizer: ``evals.chat_tokens``, the path ``skip_fraction.py`` takes),
cut to the shape's length.

A shape longer than every prompt (or a batch wider than the prompts that long) is skipped with a
note, never tiled: a prompt repeated after itself attends to its own earlier copy, which is not
how a real prompt of that length attends, and the skipped share would again not be the one
measured. The prompts of an eval share their chat template's opening tokens, so the speed phase
flushes SGLang's radix cache before every run of them (``run``); within one run the
requests are distinct prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from backends.backend_conf import ModelConf
from evals.base import Eval, EvalPrompt
from evals.chat_tokens import chat_ids, load_tokenizer
from evals.sample_line import ChatMessage
from pipeline.config.prompt_source import (
    EVAL_PREFIX,
    SPEED_KEY,
    PromptSetting,
    eval_name,
    matched_evals,
    source_problems,
    tokenizer_source,
)
from pipeline.measuring.speed.plan import SpeedShape, TokenRange, prompt_ids
from pipeline.results.cell_error import CellError
from pipeline.results.nested_schema import PromptsJson
from pipeline.results.result_schema import SpeedJson

ChatIds = Callable[[list[ChatMessage]], list[int]]  # messages -> the ids the server sees


@dataclass(frozen=True)
class PromptPool:
    """The distinct tokenized prompts of one eval, in its order, and what made them."""

    source: str  # speed.prompts as set: eval:NAME
    tokenizer: str  # the folder its tokenizer came from
    prompts: tuple[tuple[int, ...], ...]
    # each prompt's first question id in the eval (the parity phase names its sequences' questions)
    question_ids: tuple[str, ...] = ()

    @property
    def eval_name(self) -> str:
        """The eval the prompts came from (``eval:NAME``)."""
        return self.source.split(":", 1)[-1]

    def describe(self) -> PromptsJson:
        """``speed.prompts`` of result.json: where the ids came from, how many, how long."""
        lengths = [len(p) for p in self.prompts]
        return {
            "source": self.source,
            "tokenizer": self.tokenizer,
            "distinct": len(self.prompts),
            "shortest": min(lengths),
            "longest": max(lengths),
            "shared_prefix_tokens": shared_prefix(self.prompts),
            "radix_cache": "flushed before every run",
        }


@dataclass(frozen=True)
class EvalPools:
    """The pools ``serving.prompts=eval:PATTERN`` matched, one per eval, in the cell's order."""

    setting: str  # the setting as set: eval:NAME (one pool, its source) or eval:PATTERN
    pools: tuple[PromptPool, ...]

    @property
    def pattern(self) -> bool:
        """Whether the setting was a pattern: each bucket then says which eval it drew from."""
        return self.setting != self.pools[0].source


def shared_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """How many opening ids every prompt shares (the chat template's and the eval's fixed text)."""
    first = prompts[0] if prompts else ()
    size = min((len(p) for p in prompts), default=0)
    for index in range(size):
        if any(p[index] != first[index] for p in prompts):
            return index
    return size


def distinct_prompts(
    messages: Sequence[list[ChatMessage]], chat_ids: ChatIds
) -> list[tuple[int, ...]]:
    """Each distinct prompt's ids once, in the eval's order (its repeats send the same ids)."""
    found = dict.fromkeys(tuple(chat_ids(m)) for m in messages)
    return [ids for ids in found if ids]


def shape_note(pool: PromptPool, shape: SpeedShape) -> str | None:
    """Why ``shape`` cannot be sent from ``pool`` (None: it can)."""
    long_enough = sum(len(p) >= shape.prompt_tokens for p in pool.prompts)
    if long_enough >= shape.batch:
        return None
    longest = max(len(p) for p in pool.prompts)
    return (
        f"{shape.label} skipped: speed.prompts={pool.source} has {long_enough} distinct prompts "
        f"of {shape.prompt_tokens} tokens or more (the longest has {longest}), the shape needs "
        f"{shape.batch}; real text is not tiled (a repeated prompt attends to its own copy)"
    )


def pool_prompts(pool: PromptPool, shape: SpeedShape, serial: int) -> list[list[int]]:
    """The ``shape.batch`` prompts of run ``serial``: distinct prompts, each cut to the length.

    Runs take the prompts long enough in turn, so consecutive runs differ while the pool lasts.
    """
    fit = [p for p in pool.prompts if len(p) >= shape.prompt_tokens]
    return [list(fit[(serial + i) % len(fit)][: shape.prompt_tokens]) for i in range(shape.batch)]


class RunPrompts:
    """Where a run's prompts come from: random ids, or an eval's pool (``speed.prompts``)."""

    def __init__(self, ids: TokenRange | None, pool: PromptPool | None, seed: int) -> None:
        self.ids, self.pool, self.seed = ids, pool, seed

    def describe(self) -> SpeedJson:
        """The ``speed`` block's keys that say what the prompts were."""
        if self.pool is not None:
            return {"prompts": self.pool.describe()}
        assert self.ids is not None  # one of the two is always set
        return {
            "token_ids": {"low": self.ids.low, "high": self.ids.high, "source": self.ids.source}
        }

    def of_run(self, shape: SpeedShape, serial: int, flush: Callable[[], None]) -> list[list[int]]:
        """The prompts of run ``serial`` of ``shape``; an eval's after ``flush`` (the server's)."""
        if self.pool is not None:
            flush()  # the eval's prompts share their opening: no run may reuse its KV
            return pool_prompts(self.pool, shape, serial)
        assert self.ids is not None
        length = shape.prompt_tokens
        return [prompt_ids(self.ids, self.seed, serial + i, length) for i in range(shape.batch)]


def eval_prompt_pool(
    conf: PromptSetting, evals: Mapping[str, Eval], model: ModelConf, key: str = SPEED_KEY
) -> PromptPool | None:
    """The pool ``key`` asks for (None: random ids), tokenized before the server starts.

    Raises:
        ValueError: ``speed.prompts`` names no eval of the cell, the model has no local
            tokenizer (``evals.chat_tokens.TokenizerError``), or the eval has no prompt.
    """
    found = eval_prompt_pools(conf, evals, model, key)
    return None if found is None else found.pools[0]


def eval_prompt_pools(
    conf: PromptSetting, evals: Mapping[str, Eval], model: ModelConf, key: str = SPEED_KEY
) -> EvalPools | None:
    """A pool per eval ``key`` names or its pattern matches (None: random), tokenized now.

    Raises:
        ValueError: as ``eval_prompt_pool``, for any matched eval.
    """
    name = eval_name(conf.prompts, key) if conf.enabled else None
    if name is None:
        return None
    problems = source_problems(conf, list(evals), key)
    if problems:
        raise ValueError(problems[0])
    path, where = tokenizer_source(model)
    tok = load_tokenizer(path, where)
    kwargs = model.chat_template_kwargs
    pools = []
    for each in matched_evals(name, list(evals)):
        every = evals[each].prompts()
        prompts = distinct_prompts([p.messages for p in every], lambda m: chat_ids(tok, m, kwargs))
        if not prompts:
            raise ValueError(f"{key}={conf.prompts}: the eval {each} has no prompt")
        ids = _first_ids(every, len(prompts))
        pools.append(PromptPool(f"{EVAL_PREFIX}{each}", str(path), tuple(prompts), ids))
    return EvalPools(conf.prompts, tuple(pools))


def _first_ids(prompts: Sequence[EvalPrompt], count: int) -> tuple[str, ...]:
    """The distinct question ids in the eval's order: one per distinct prompt, as ``count`` says.

    Empty when they do not pair one to one (two questions with one text): no sequence is then
    named by a question rather than by a wrong one.
    """
    ids = tuple(dict.fromkeys(p.question_id for p in prompts))
    return ids if len(ids) == count else ()


def cell_prompt_pool(
    conf: PromptSetting, evals: Mapping[str, Eval], model: ModelConf, key: str = SPEED_KEY
) -> PromptPool | None:
    """``eval_prompt_pool`` for a cell: a problem the user can fix ends it as a config error.

    Raises:
        CellError: kind ``config``, with ``eval_prompt_pool``'s message.
    """
    try:
        return eval_prompt_pool(conf, evals, model, key)
    except ValueError as err:  # no eval of that name, no local tokenizer: the user's settings
        raise CellError("config", str(err)) from err


def cell_prompt_pools(
    conf: PromptSetting, evals: Mapping[str, Eval], model: ModelConf, key: str = SPEED_KEY
) -> EvalPools | None:
    """``eval_prompt_pools`` for a cell: a problem the user can fix ends it as a config error.

    Raises:
        CellError: kind ``config``, with ``eval_prompt_pools``' message.
    """
    try:
        return eval_prompt_pools(conf, evals, model, key)
    except ValueError as err:  # no eval matched, no local tokenizer: the user's settings
        raise CellError("config", str(err)) from err
