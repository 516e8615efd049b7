"""lm-eval's ``local-chat-completions`` model, recording SGLang's per-request statistics.

lm-eval's chat model keeps only ``choices[i].message.content`` of each response, so it loses the
finish reason (truncation), the token counts and SGLang's speculative statistics. The subclass
here changes nothing lm-eval sends or scores except for adding SGLang's statistics flags
(``evals.responses.stats_request_flags``) and the model's ``chat_template_kwargs`` to each body; it
parses every response with ``evals.responses.parse_chat_response`` before lm-eval reads it and
keeps the result in a ``RequestLog`` keyed by the request's messages (lm-eval's per-sample log
carries the same messages, which is how the two are joined).

The request's messages are known where the HTTP call is made (``amodel_call`` /
``model_call``) but not where the body is parsed, so a context variable carries them across
(one asyncio task per request: each sees its own value).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # typing.NotRequired is Python 3.11+; the annotations are strings at run time
    from typing_extensions import NotRequired

from evals.base import RequestTarget
from evals.client import chat_url
from evals.eval_conf import SamplingConf
from evals.responses import (
    ChatResult,
    ResponseFormatError,
    parse_chat_response,
    stats_request_flags,
)


class GenKwargs(TypedDict):
    """lm-eval ``gen_kwargs`` (also ``gen_kwargs`` of result.json's lm_eval block)."""

    max_gen_toks: int
    temperature: float
    do_sample: bool
    top_p: NotRequired[float]  # each only when the model's sampling sets it
    top_k: NotRequired[int]
    min_p: NotRequired[float]


class ModelArgs(TypedDict):
    """lm-eval ``local-chat-completions`` arguments (``model_args`` of the lm_eval block)."""

    base_url: str
    model: str
    num_concurrent: int
    max_retries: int
    max_gen_toks: int
    timeout: int
    tokenizer_backend: None
    tokenized_requests: bool
    seed: NotRequired[int]


class AuthArgs(TypedDict, total=False):
    """The API key as lm-eval's ``header`` argument (absent without a key)."""

    header: dict[str, str]


_PROMPT: contextvars.ContextVar[str | None] = contextvars.ContextVar("lm_eval_prompt", default=None)


def gen_kwargs(sampling: SamplingConf) -> GenKwargs:
    """lm-eval ``gen_kwargs`` from the model's sampling settings (they override the task's)."""
    out: GenKwargs = {
        "max_gen_toks": sampling.max_tokens,
        "temperature": sampling.temperature,
        "do_sample": sampling.temperature > 0,
    }
    if sampling.top_p is not None:
        out["top_p"] = sampling.top_p
    if sampling.top_k is not None:
        out["top_k"] = sampling.top_k
    if sampling.min_p is not None:
        out["min_p"] = sampling.min_p
    return out


def model_args(target: RequestTarget) -> ModelArgs:
    """Arguments of lm-eval's ``local-chat-completions`` model for the cell (no API key)."""
    args: ModelArgs = {
        "base_url": chat_url(target.base_url),
        "model": target.model,
        "num_concurrent": target.client.concurrency,
        # lm-eval counts attempts (tenacity stop_after_attempt); ours counts retries.
        "max_retries": target.client.max_retries + 1,
        "max_gen_toks": target.sampling.max_tokens,
        "timeout": int(target.client.request_timeout_s),
        "tokenizer_backend": None,
        "tokenized_requests": False,
    }
    if target.sampling.seed is not None:
        args["seed"] = target.sampling.seed
    return args


def extra_body(target: RequestTarget) -> dict[str, Any]:
    """What every request body carries besides lm-eval's fields."""
    extra: dict[str, Any] = stats_request_flags(stream=False)  # lm-eval does not stream
    if target.chat_template_kwargs:
        extra["chat_template_kwargs"] = dict(target.chat_template_kwargs)
    return extra


def auth_args(target: RequestTarget) -> AuthArgs:
    """The API key as lm-eval's header argument (kept out of ``model_args``: result.json)."""
    key = target.client.api_key
    return {"header": {"Authorization": f"Bearer {key}"}} if key else {}


@dataclass(frozen=True)
class LoggedResponse:
    """One choice of one response lm-eval received."""

    result: ChatResult | None  # None: the body was not a chat completion
    error: str | None
    attempts: int  # HTTP attempts lm-eval made for this prompt until this answer


@dataclass
class RequestLog:
    """Responses by prompt (the JSON string of the chat messages), in arrival order."""

    responses: dict[str, list[LoggedResponse]] = field(default_factory=dict)
    _attempts: dict[str, int] = field(default_factory=dict)

    def started(self, prompt: str | None) -> None:
        """Count one HTTP attempt for ``prompt``."""
        if prompt is not None:
            self._attempts[prompt] = self._attempts.get(prompt, 0) + 1

    def record(self, prompt: str | None, outputs: object) -> None:
        """Parse a response body (or a list of them) and keep each choice under ``prompt``."""
        if prompt is None:
            return
        attempts = self._attempts.pop(prompt, 1)
        bodies = outputs if isinstance(outputs, list) else [outputs]
        for body in bodies:
            choices = body.get("choices") if isinstance(body, dict) else None
            for index in range(max(len(choices) if isinstance(choices, list) else 0, 1)):
                self.responses.setdefault(prompt, []).append(_parse(body, index, attempts))

    def take(self, prompt: str) -> LoggedResponse | None:
        """The oldest response to ``prompt`` not taken yet (None when there is none)."""
        queue = self.responses.get(prompt)
        return queue.pop(0) if queue else None

    def all(self) -> list[LoggedResponse]:
        """Every response not taken yet."""
        return [logged for queue in self.responses.values() for logged in queue]


def _parse(body: object, index: int, attempts: int) -> LoggedResponse:
    try:
        return LoggedResponse(parse_chat_response(body, index), None, attempts)
    except ResponseFormatError as exc:
        return LoggedResponse(None, f"ResponseFormatError: {exc}", attempts)


def prompt_key(messages: object) -> str | None:
    """The JSON string lm-eval sends for a request (``JsonChatStr.prompt``) or None."""
    if isinstance(messages, Sequence) and not isinstance(messages, str):
        if len(messages) != 1:  # chat completions run one request per call (batch size 1)
            return None
        messages = messages[0]
    prompt = getattr(messages, "prompt", messages)
    return prompt if isinstance(prompt, str) else None


@functools.cache
def recording_model_class() -> type:
    """The ``LocalChatCompletion`` subclass (built on first use: lm-eval imports are heavy)."""
    from lm_eval.models.openai_completions import LocalChatCompletion

    class RecordingChatCompletion(LocalChatCompletion):
        """``local-chat-completions`` plus SGLang's statistics flags and a request log."""

        def __init__(self, log: RequestLog, extra_body: dict[str, Any], **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.request_log = log
            self.extra_body = dict(extra_body)

        def _create_payload(self, messages: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
            payload: dict[str, Any] = super()._create_payload(messages, *args, **kwargs)
            return {**payload, **self.extra_body}

        async def amodel_call(self, *args: Any, **kwargs: Any) -> Any:
            prompt = prompt_key(kwargs.get("messages", args[2] if len(args) > 2 else None))
            token = _PROMPT.set(prompt)
            self.request_log.started(prompt)
            try:
                return await super().amodel_call(*args, **kwargs)
            finally:
                _PROMPT.reset(token)

        def model_call(self, *args: Any, **kwargs: Any) -> Any:
            prompt = prompt_key(kwargs.get("messages", args[0] if args else None))
            self.request_log.started(prompt)
            return super().model_call(*args, **kwargs)

        def parse_generations(self, outputs: Any, **kwargs: Any) -> list[str]:
            # The synchronous path (num_concurrent 1) passes the prompts as ``contexts``.
            contexts = kwargs.get("contexts")
            prompt = prompt_key(contexts) if contexts is not None else _PROMPT.get()
            self.request_log.record(prompt, outputs)
            generations: list[str] = super().parse_generations(outputs, **kwargs)
            return generations

    return RecordingChatCompletion
