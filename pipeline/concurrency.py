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
from typing import Any, Protocol, TypeGuard, TypeVar

LIMIT_KEY = "effective_max_running_requests_per_dp"


class _HasQuestion(Protocol):
    @property
    def question_id(self) -> str: ...


P = TypeVar("P", bound=_HasQuestion)


def server_concurrency(server_info: Mapping[str, Any]) -> int | None:
    """Requests the server runs at once, from its ``/server_info``.

    ``internal_states`` has one entry per reporting scheduler, each with the per-DP-rank limit;
    with fewer entries than ``dp_size`` ranks each entry stands for ``dp_size / len(states)``.

    Args:
        server_info: the ``/server_info`` body.

    Returns:
        The sum of the per-rank limits over all DP ranks, or None when the server does not
        report ``internal_states[*].effective_max_running_requests_per_dp`` (not SGLang, or an
        older version): the caller keeps its configured concurrency.

    Raises:
        ValueError: a limit or ``dp_size`` that is present but not a positive integer.
    """
    states = server_info.get("internal_states")
    if not isinstance(states, list) or not states:
        return None
    limits = [s.get(LIMIT_KEY) for s in states if isinstance(s, Mapping)]
    if len(limits) != len(states) or all(x is None for x in limits):
        return None
    counts: list[int] = []
    for i, limit in enumerate(limits):
        if not _positive_int(limit):
            raise ValueError(
                f"/server_info internal_states[{i}].{LIMIT_KEY}={limit!r}: expected a positive "
                "integer (is this an SGLang server?)"
            )
        counts.append(limit)
    dp_size = server_info.get("dp_size", 1)
    if not _positive_int(dp_size):
        raise ValueError(f"/server_info dp_size={dp_size!r}: expected a positive integer")
    return max(1, round(sum(counts) * dp_size / len(states)))


def client_concurrency(server_info: Mapping[str, Any], configured: int) -> int:
    """The server's running limit when it reports one, else ``configured`` (client.concurrency)."""
    return server_concurrency(server_info) or configured


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


def _positive_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
