"""``return_logprob`` on ``/generate``: the request's fields and ``meta_info``'s keys (pure).

The keys, their order and the ``[logprob, token_id, text]`` triples are SGLang's, the same in
0.5.19 and 0.5.23 (docs/sglang-logprobs.md): ``input_token_logprobs`` starts with a null logprob
at ``logprob_start_len``; ``input_top_logprobs`` starts with a null row; ``max_new_tokens: 0``
scores the input and generates nothing. A request that asks for logprobs gets its output ids from
``logprobs.py``'s distributions (sampled at its temperature), so its ids are samples of what it
reports; its text stays the answer model's. Not imitated: logprobs in a stream, on the chat
routes, ``token_ids_logprob`` and ``return_text_in_logprobs`` (the text element stays null).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.simserver.logprobs import (
    Noise,
    Position,
    Shape,
    at_temperature,
    context_hashes,
    draws,
    extend_hash,
    greedy,
    mix64,
    position,
    sample,
)
from pipeline.simserver.reply_types import LogprobKeys
from pipeline.simserver.simconfig import SimConfig

MSG_START = (
    "req.logprob_start_len={start} is higher than the number of input tokens "
    "len(req.origin_input_ids)={n}. Please use a smaller logprob_start_len."
)


class LogprobRequestError(ValueError):
    """A logprob field SGLang would refuse (the server answers HTTP 400 with it)."""


@dataclass(frozen=True)
class LogprobAsk:
    """What a request asks for: where input logprobs start, how many top ids, the temperature."""

    start: int  # logprob_start_len; -1: output logprobs only
    top: int  # top_logprobs_num
    temperature: float  # sampling_params.temperature (SGLang's default 1.0)


def parse_ask(body: dict[str, Any]) -> LogprobAsk | None:
    """The request's logprob fields (None without ``return_logprob``).

    Raises:
        LogprobRequestError: naming the field and what it must be.
    """
    if not body.get("return_logprob"):
        return None
    start = body.get("logprob_start_len", -1)
    top = body.get("top_logprobs_num", 0)
    for name, value in (("logprob_start_len", start), ("top_logprobs_num", top)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise LogprobRequestError(f"{name}={value!r}: expected an integer")
    params = body.get("sampling_params") or {}
    temperature = params.get("temperature", 1.0) if isinstance(params, dict) else 1.0
    if not isinstance(temperature, int | float) or temperature < 0:
        raise LogprobRequestError(f"temperature={temperature!r}: expected a number >= 0")
    return LogprobAsk(start, max(int(top), 0), float(temperature))


@dataclass(frozen=True)
class LogprobModel:
    """This server's distributions: their shape, the seed and the noise this cell adds."""

    shape: Shape
    seed: int
    noises: tuple[Noise, ...] = ()
    decode_noises: tuple[Noise, ...] = ()  # seen by decoding only (``verify_logit_sigma``)

    def at(self, context: int, where: int) -> Position:
        """The distribution after context hash ``context``, predicting position ``where``."""
        return position(self.shape, context, where, self.noises)

    def decoding(self, context: int, where: int) -> Position:
        """The distribution decoding (or verifying) reads: ``at`` plus the decode-only noise."""
        return position(self.shape, context, where, self.noises + self.decode_noises)


def cell_model(
    conf: SimConfig, matched: Sequence[int], restart_salt: int, speculative: bool = True
) -> LogprobModel:
    """The cell's distributions: the matched effects' ``logit_sigma`` and this start's noise.

    Args:
        conf: the ``--sim-config``.
        matched: indices of the effects that apply to the cell (``CellTargets.matched``).
        restart_salt: drawn at every start; with ``logprobs.restart_sigma`` > 0 starts differ.
        speculative: whether the server verifies drafts; ``verify_logit_sigma`` needs it (a
            server with speculation off decodes what it prefills: the losslessness arm).
    """
    lp = conf.logprobs
    shape = Shape(lp.vocab, lp.candidates, lp.logit_scale, lp.rest_mass)
    noises = [
        Noise(mix64(i + 1), conf.effects[i].logit_sigma, conf.effects[i].logit_from_position)
        for i in matched
        if conf.effects[i].logit_sigma > 0
    ]
    if lp.restart_sigma > 0:
        noises.append(Noise(restart_salt, lp.restart_sigma))
    decode = tuple(
        Noise(mix64(i + 1001), conf.effects[i].verify_logit_sigma)
        for i in matched
        if conf.effects[i].verify_logit_sigma > 0 and speculative
    )
    return LogprobModel(shape, conf.seed, tuple(noises), decode)


@dataclass(frozen=True)
class LogprobReply:
    """The generated ids and the ``meta_info`` keys of one answered request."""

    output_ids: tuple[int, ...]
    meta: LogprobKeys  # the three keys always, the top rows with top_logprobs_num > 0


def _triple(pos: Position, token: int) -> list[Any]:
    return [pos.logprob(token), token, None]


def reply(
    model: LogprobModel, ask: LogprobAsk, prompt: Sequence[int], new_tokens: int, draw: str
) -> LogprobReply:
    """Score ``prompt`` from ``ask.start`` and generate ``new_tokens`` ids after it.

    Raises:
        LogprobRequestError: when ``logprob_start_len`` is at or beyond the prompt's end.
    """
    if ask.start >= len(prompt):
        raise LogprobRequestError(MSG_START.format(start=ask.start, n=len(prompt)))
    hashes = context_hashes(prompt, model.seed)
    inputs: list[list[Any]] = []
    input_top: list[Any] = []
    if ask.start >= 0:
        inputs.append([None, prompt[ask.start], None])
        input_top.append(None)
        for t in range(ask.start + 1, len(prompt)):
            pos = model.at(hashes[t - 1], t)
            inputs.append(_triple(pos, prompt[t]))
            input_top.append(_top_row(pos, ask.top, model))
    ids, outputs, output_top = _generate(model, ask, hashes[-1], len(prompt), new_tokens, draw)
    meta: LogprobKeys = {
        "input_token_logprobs": inputs,
        "output_token_logprobs": outputs,
        "output_token_logprobs_length": len(outputs),
    }
    if ask.top > 0:
        meta["input_top_logprobs"] = input_top
        meta["output_top_logprobs"] = output_top
    return LogprobReply(tuple(ids), meta)


def _top_row(pos: Position, k: int, model: LogprobModel) -> list[list[Any]] | None:
    if k <= 0:
        return None
    return [[lp, token, None] for token, lp in pos.top(k, model.shape.vocab)]


def _generate(
    model: LogprobModel, ask: LogprobAsk, context: int, at: int, count: int, draw: str
) -> tuple[list[int], list[list[Any]], list[Any]]:
    stream = draws(mix64(context ^ mix64(hash_text(draw))))
    ids: list[int] = []
    rows: list[list[Any]] = []
    tops: list[Any] = []
    for k in range(count):
        pos = at_temperature(model.decoding(context, at + k), ask.temperature)
        token = greedy(pos) if ask.temperature <= 0 else sample(pos, stream, model.shape.vocab)
        ids.append(token)
        rows.append(_triple(pos, token))
        tops.append(_top_row(pos, ask.top, model))
        context = extend_hash(context, token)
    return ids, rows, tops


def hash_text(text: str) -> int:
    """A stable 64-bit hash of a string (Python's ``hash`` changes per process)."""
    h = 0
    for byte in text.encode():
        h = mix64(h ^ byte)
    return h
