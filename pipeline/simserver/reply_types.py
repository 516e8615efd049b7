"""The simulated server's reply bodies as typed dicts (SGLang's key names; no code).

Each body is built as one dict literal in SGLang's key order (``payloads.py``, ``aborts.py``), so
the JSON on the wire is what the live files in ``tests/data/live-sglang-<release>/`` hold; these
types only let mypy check the keys and their values. A ``NotRequired`` key is one a release, a
flag or the request decides (``surface.py``, ``Flavour``). The ``*Keys`` types with
``total=False`` are the optional groups of ``meta_info``: present together or not at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:  # typing.NotRequired is Python 3.11+; the annotations are strings at run time
    from typing_extensions import NotRequired


class StopFinish(TypedDict):
    """``meta_info.finish_reason`` of a natural stop."""

    type: Literal["stop"]
    matched: int


class LengthFinish(TypedDict):
    """``meta_info.finish_reason`` at ``max_new_tokens``."""

    type: Literal["length"]
    length: int


class AbortFinish(TypedDict):
    """``meta_info.finish_reason`` of an aborted request (``FINISH_ABORT.to_json``)."""

    type: Literal["abort"]
    message: str
    status_code: int | None
    err_type: str | None


class ErrorBody(TypedDict):
    """The OpenAI-style error object SGLang (or a gateway) answers with."""

    object: Literal["error"]
    message: str
    type: str
    param: None
    code: int


class StreamError(TypedDict):
    """``data: {"error": ...}`` of a stream."""

    error: ErrorBody


class SpecKeys(TypedDict, total=False):
    """The ``spec_*`` keys of ``meta_info`` (none without speculation statistics)."""

    spec_accept_rate: float
    spec_accept_length: float
    spec_num_correct_drafts: int
    spec_num_proposed_drafts: int
    spec_verify_ct: int
    spec_accepted_drafts: int  # the aliases 0.5.21 removed
    spec_proposed_drafts: int
    spec_correct_drafts_histogram: list[int]
    spec_accept_histogram: list[int]  # alias


class LogprobKeys(TypedDict, total=False):
    """The ``return_logprob`` keys of ``meta_info`` (``[logprob, token_id, text]`` triples)."""

    input_token_logprobs: list[list[Any]]
    output_token_logprobs: list[list[Any]]
    output_token_logprobs_length: int
    input_top_logprobs: list[Any]  # with top_logprobs_num > 0: a row (or null) per position
    output_top_logprobs: list[Any]


class StorageWaits(TypedDict, total=False):
    """``meta_info``'s storage waits (releases whose surface has them)."""

    storage_prefetch_wait: float
    storage_staging_wait: float


class SchedulerTimes(TypedDict, total=False):
    """``meta_info``'s scheduler timestamps (``--enable-metrics``)."""

    forward_entry_time: float
    prefill_finished_time: float
    queue_time: float


class ClientTimes(TypedDict, total=False):
    """``meta_info``'s trailing timestamps (``--enable-metrics``; the latency by release)."""

    request_received_ts: float
    first_token_latency: float
    api_server_dispatch_finish_ts: float
    request_finished_ts: float
    decode_throughput: float
    response_sent_to_client_ts: float


class WeightVersion(TypedDict):
    """One span of ``weight_versions``."""

    version: str
    start: int
    end: int


class MetaInfo(SpecKeys, LogprobKeys, StorageWaits, SchedulerTimes, ClientTimes):
    """One choice's ``meta_info`` (``finish_reason`` null on a streamed chunk before the last)."""

    id: str
    finish_reason: StopFinish | LengthFinish | AbortFinish | None
    prompt_tokens: int
    weight_version: str
    num_retractions: int
    reasoning_tokens: int
    completion_tokens: int
    cached_tokens: int
    weight_versions: list[WeightVersion]
    cached_tokens_details: None
    dp_rank: int | None
    e2e_latency: float


class SpecTokensDetails(TypedDict):
    """``sglext.spec_tokens_details`` of one choice."""

    spec_accept_rate: float
    spec_accept_length: float
    spec_cap_length: float
    spec_block_accept_length: float
    spec_num_correct_drafts: int
    spec_num_proposed_drafts: int
    spec_verify_ct: int
    spec_correct_drafts_histogram: list[int]
    spec_cap_lens_histogram: list[int]


class SglExt(TypedDict):
    """``sglext``: one details object for n == 1, a list (null where none) for n > 1."""

    spec_tokens_details: SpecTokensDetails | list[SpecTokensDetails | None] | None


class Usage(TypedDict):
    """OpenAI ``usage`` with SGLang's extra keys."""

    prompt_tokens: int
    total_tokens: int
    completion_tokens: int
    prompt_tokens_details: None
    reasoning_tokens: int
    completion_tokens_details: NotRequired[None]


class ChatMessage(TypedDict):
    """A non-streamed choice's ``message``."""

    role: Literal["assistant"]
    content: str
    reasoning_content: None
    tool_calls: NotRequired[None]


class ChatChoice(TypedDict):
    """One choice of a ``chat.completion``."""

    index: int
    message: ChatMessage
    logprobs: None
    finish_reason: str
    matched_stop: int | None
    meta_info: NotRequired[MetaInfo]


class ChatMetadata(TypedDict):
    """A ``chat.completion``'s ``metadata``."""

    weight_version: str
    weight_versions: list[WeightVersion]


class ChatBody(TypedDict):
    """A non-streaming ``chat.completion`` body."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    metadata: ChatMetadata
    sglext: NotRequired[SglExt]


class Delta(TypedDict, total=False):
    """A streamed choice's ``delta`` (which keys, and their order, depend on the release)."""

    role: Literal["assistant"]
    content: str | None
    reasoning_content: None
    tool_calls: None


class DeltaChoice(TypedDict):
    """One choice of a ``chat.completion.chunk``."""

    index: int
    delta: Delta
    logprobs: None
    finish_reason: str | None
    matched_stop: int | None


class Chunk(TypedDict):
    """One ``chat.completion.chunk`` of a stream."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[DeltaChoice]
    usage: NotRequired[Usage | None]
    sglext: NotRequired[SglExt]


class GenerateBody(TypedDict):
    """A native ``/generate`` body (or one chunk of its stream)."""

    text: str
    output_ids: list[int]
    meta_info: MetaInfo
