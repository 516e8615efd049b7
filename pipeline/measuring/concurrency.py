"""How many requests the client keeps in flight, and in which order it sends them (pure).

SGLang runs at most ``effective_max_running_requests_per_dp`` requests on each data-parallel
rank and queues the rest. A client that sends fewer leaves batch slots empty (GPU time wasted);
one that sends more only lengthens the server's queue, and the queued requests then all start
late together. So the client's concurrency is the server's total running limit.

At the end of an eval the batch empties: the last requests run with free slots beside them.
Starting the longest requests first (longest-processing-time order) leaves short ones for the
end, so the tail is short. Lengths come from earlier samples of the same questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from backends.server_info import ServerInfo


class _HasQuestion(Protocol):
    @property
    def question_id(self) -> str: ...


P = TypeVar("P", bound=_HasQuestion)


def client_concurrency(server_info: ServerInfo, configured: int) -> int:
    """The server's running limit when it reports one, else ``configured`` (client.concurrency).

    The limit is ``ServerInfo.running_limit``: the per-DP-rank limits summed over all ranks; an
    older or non-SGLang server that reports none leaves the configured concurrency.

    Raises:
        ValueError: a limit or ``dp_size`` that is present but not a positive integer.
    """
    return server_info.running_limit() or configured


def expected_lengths(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Mean ``completion_tokens`` per ``question_id`` over sample records that carry one.

    Truncated answers count with their (long) length; failed requests (no token count) do not.
    """
    sums: dict[str, list[float]] = {}
    for record in records:
        tokens, qid = record.get("completion_tokens"), record.get("question_id")
        if isinstance(tokens, int | float) and not isinstance(tokens, bool) and qid is not None:
            acc = sums.setdefault(str(qid), [0.0, 0.0])
            acc[0] += tokens
            acc[1] += 1
    return {qid: total / count for qid, (total, count) in sums.items()}


def longest_first(prompts: Sequence[P], records: Iterable[Mapping[str, Any]]) -> list[P]:
    """Order prompts so those expected to run longest start first.

    Prompts of questions with no earlier sample go first of all: one may be long, and a short
    one sent early costs nothing. Ties (and everything, when no length is known) keep their
    order, so the result is deterministic.

    Args:
        prompts: the prompts still to send (anything with a ``question_id``).
        records: earlier sample records (``question_id``, ``completion_tokens``), e.g. the
            samples kept from an interrupted run or another repeat of the same questions.

    Returns:
        A new list with the same prompts.
    """
    lengths = expected_lengths(records)
    unknown = float("inf")
    return sorted(prompts, key=lambda p: -lengths.get(p.question_id, unknown))
