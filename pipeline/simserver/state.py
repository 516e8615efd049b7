"""Mutable server state: accept-length totals, Prometheus counters and the ledger.

The totals mirror SGLang's: ``avg_spec_accept_length`` per DP rank is accepted tokens (bonus
included, prefill token excluded) over verify steps since the last ``/flush_cache``, folded in
only at the end of each decode log interval (``--decode-log-interval`` verify steps), so the key
is absent until one interval has passed and the last, unfinished interval is left out; the
Prometheus counters are cumulative for the life of the process and survive a flush; the gauges
hold the last decode log interval.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pipeline.simserver.served import Served
from pipeline.simserver.surface import SimSurface

log = logging.getLogger("sglang.simserver")
MIN_INTERVAL_S = 1.0


@dataclass
class RankTotals:
    """Spec totals of one DP rank since the last flush: the folded ones, and those still open."""

    accept_tokens: int = 0
    forward_ct: int = 0
    open_accept_tokens: int = 0  # the current log interval's, not yet in /server_info
    open_forward_ct: int = 0

    def average(self) -> float | None:
        """``avg_spec_accept_length``; None (key absent) before the first folded interval."""
        return self.accept_tokens / self.forward_ct if self.forward_ct else None

    def add(self, verify_ct: int, accept_tokens: int) -> None:
        """Count one request's verify steps in the open interval."""
        self.open_forward_ct += verify_ct
        self.open_accept_tokens += accept_tokens

    def fold(self) -> None:
        """End of a log interval: what it counted enters the published totals."""
        self.forward_ct += self.open_forward_ct
        self.accept_tokens += self.open_accept_tokens
        self.open_forward_ct = self.open_accept_tokens = 0


@dataclass
class RankCounters:
    """Cumulative Prometheus counters of one DP rank (they survive a flush)."""

    # Counted by ``is_streaming`` ("false", "true"); a release that does not split one sums it.
    requests: dict[str, int] = field(default_factory=lambda: {"false": 0, "true": 0})
    prompt_tokens: dict[str, int] = field(default_factory=lambda: {"false": 0, "true": 0})
    generation_tokens: dict[str, int] = field(default_factory=lambda: {"false": 0, "true": 0})
    verify_calls: int = 0


@dataclass
class Interval:
    """Counters of the current decode log interval."""

    verify: int = 0
    correct: int = 0
    tokens: int = 0
    started: float = 0.0


class ServerState:
    """Everything that changes while the server runs."""

    def __init__(
        self,
        dp_size: int,
        log_interval: int,
        num_draft_tokens: int,
        foreign_requests: int = 0,
        foreign_running: int = 0,
    ) -> None:
        self.ranks = [RankTotals() for _ in range(max(dp_size, 1))]
        self.counters = [RankCounters() for _ in self.ranks]  # Prometheus, per DP rank
        self.foreign_left = foreign_requests  # requests of another client still to count
        self.foreign_running = foreign_running  # requests of another client that never end
        self.log_interval = max(log_interval, 1)
        self.num_draft_tokens = num_draft_tokens
        self.in_flight = 0
        self.completed = 0  # chat/generate requests answered (stop faults count these)
        self.served_requests = 0  # requests that reached generation (round-robin over ranks)
        self.interval = Interval(started=time.monotonic())
        self.open_verify = 0  # verify steps since the totals were last folded (every rank)
        self.gauge_accept_length = 0.0
        self.gauge_accept_rate = 0.0
        self.last_gen_throughput = 0.0
        self.flushes = 0  # /flush_cache calls that emptied the cache (the ledger's cache epoch)
        self._attempts: dict[str, int] = {}

    def attempt(self, prompt: str) -> int:
        """How many earlier requests carried this exact prompt (then count this one)."""
        n = self._attempts.get(prompt, 0)
        self._attempts[prompt] = n + 1
        return n

    @property
    def running(self) -> int:
        """Requests running now, another client's included (what a flush waits for)."""
        return self.in_flight + self.foreign_running

    @property
    def num_requests(self) -> int:
        """Requests counted by the Prometheus counters (every rank, other clients' included)."""
        return sum(sum(c.requests.values()) for c in self.counters)

    def record(self, served: Sequence[Served], streaming: bool) -> int | None:
        """Count one generated request (all its choices) on one DP rank.

        Returns:
            The DP rank that served it, as ``meta_info.dp_rank`` says (None with one rank).
        """
        rank = self._count(served, streaming)
        if self.foreign_left > 0:  # another client sent the same request at the same time
            self.foreign_left -= 1
            self._count(served, streaming)
        return rank if len(self.ranks) > 1 else None

    def _count(self, served: Sequence[Served], streaming: bool) -> int:
        index = self.served_requests % len(self.ranks)
        rank, counters = self.ranks[index], self.counters[index]
        self.served_requests += 1
        stream_key = "true" if streaming else "false"
        counters.requests[stream_key] += 1
        counters.prompt_tokens[stream_key] += served[0].prompt_tokens
        for s in served:
            counters.generation_tokens[stream_key] += s.completion_tokens
            self.interval.tokens += s.completion_tokens
            if s.spec is not None:
                rank.add(s.spec.verify_ct, s.spec.verify_ct + s.spec.num_correct_drafts)
                self.open_verify += s.spec.verify_ct
                counters.verify_calls += s.spec.verify_ct
                self.interval.verify += s.spec.verify_ct
                self.interval.correct += s.spec.num_correct_drafts
        if self.open_verify >= self.log_interval:  # SGLang folds its totals once per interval
            for each in self.ranks:
                each.fold()
            self.open_verify = 0
        # SGLang logs every decode_log_interval batched iterations; requests here are not batched,
        # so a logged interval also lasts at least a second (keeps the log short at 1,000 req/s).
        iv = self.interval
        if iv.verify >= self.log_interval and time.monotonic() - iv.started >= MIN_INTERVAL_S:
            self._close_interval()
        return index

    def _close_interval(self) -> None:
        iv = self.interval
        now = time.monotonic()
        self.gauge_accept_length = (iv.verify + iv.correct) / iv.verify
        self.gauge_accept_rate = iv.correct / (iv.verify * max(self.num_draft_tokens - 1, 1))
        self.last_gen_throughput = iv.tokens / max(now - iv.started, 1e-6)
        log.info(
            "Decode batch, #running-req: %d, #token: %d, token usage: 0.00, accept len: %.2f, "
            "accept rate: %.2f, cuda graph: True, gen throughput (token/s): %.2f, #queue-req: 0",
            self.in_flight,
            iv.tokens,
            self.gauge_accept_length,
            self.gauge_accept_rate,
            self.last_gen_throughput,
        )
        self.interval = Interval(started=now)

    def flush(self) -> None:
        """``/flush_cache``: zero the spec totals and the interval (not the Prometheus counters)."""
        self.ranks = [RankTotals() for _ in self.ranks]
        self.flushes += 1
        self.open_verify = 0
        self.interval = Interval(started=time.monotonic())


class Ledger:
    """Append-only JSONL of served completions, flushed per line so a crash loses nothing."""

    def __init__(self, path: str | None) -> None:
        self._file: IO[str] | None = None
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the server

    def write(self, row: dict[str, Any]) -> None:
        """Append one row (no-op without a ledger path)."""
        if self._file is not None:
            self._file.write(json.dumps(row) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


def metrics_text(
    state: ServerState,
    labels: dict[str, str],
    spec: tuple[int, int] | None,
    surface: SimSurface,
) -> str:
    """Prometheus exposition of the counters and gauges SGLang's collector names.

    As with prometheus_client's labelled counters, a counter has no sample line before the first
    request (only its HELP and TYPE). The counters are the tokenizer's (one process over every
    DP rank), so they carry no ``dp_rank`` label, in 0.5.19 and 0.5.23 alike
    (``TokenizerMetricsCollector``'s labels: 0.5.19 tokenizer_manager.py lines 706-716, 0.5.23
    observability/metrics_collector.py lines 1804-1819 and 1865-1869).

    Args:
        state: the server's counters.
        labels: ``model_name``, ``engine_type``.
        spec: (num_steps, num_draft_tokens) when speculation is on.
        surface: the imitated release (which labels each family carries).
    """
    lines: list[str] = []
    served = state.num_requests > 0
    counter_labels = {**labels, **dict.fromkeys(surface.counter_rank_labels, "0")}
    gauge = _labels({**labels, **dict.fromkeys(surface.gauge_rank_labels, "0")}, 0, 1)
    ranks = [(_labels(counter_labels, 0, 1), _summed(state.counters))] if served else []

    def metric(name: str, kind: str, help_: str, samples: Sequence[tuple[str, str, float]]) -> None:
        lines.append(f"# HELP sglang:{name} {help_}")
        lines.append(f"# TYPE sglang:{name} {kind}")
        for suffix, label, value in samples:
            lines.append(f"sglang:{name}{suffix}{{{label}}} {float(value)}")

    def counted(name: str, of: str) -> list[tuple[str, str, float]]:
        by_rank = [(base, getattr(c, of)) for base, c in ranks]
        if name not in surface.streaming_split:
            return [("_total", base, sum(split.values())) for base, split in by_rank]
        return [("_total", f'{base},is_streaming="{k}"', v)
                for base, split in by_rank for k, v in split.items()]  # fmt: skip

    metric("num_requests", "counter", "The number of requests.",
           counted("num_requests", "requests"))  # fmt: skip
    metric("prompt_tokens", "counter", "Number of prefill tokens processed.",
           counted("prompt_tokens", "prompt_tokens"))  # fmt: skip
    # Every request in flight counts as running: the simulation has no batch limit or queue.
    metric("num_running_reqs", "gauge", "The number of running requests.",
           [("", gauge, state.running)])  # fmt: skip
    metric("generation_tokens", "counter", "Number of generation tokens processed.",
           counted("generation_tokens", "generation_tokens"))  # fmt: skip
    if spec is not None:
        metric("spec_verify_calls", "counter", "Number of speculative verify calls.",
               [("_total", base, c.verify_calls) for base, c in ranks])  # fmt: skip
        gauges = (
            ("spec_accept_length", state.gauge_accept_length),
            ("spec_accept_rate", state.gauge_accept_rate),
            ("spec_num_steps", spec[0]),
            ("spec_num_draft_tokens", spec[1]),
        )
        for name, value in gauges:
            metric(name, "gauge", f"The {name.replace('_', ' ')}.", [("", gauge, value)])
    return "\n".join(lines) + "\n"


def _summed(counters: Sequence[RankCounters]) -> RankCounters:
    out = RankCounters()
    for c in counters:
        for mine, theirs in (
            (out.requests, c.requests),
            (out.prompt_tokens, c.prompt_tokens),
            (out.generation_tokens, c.generation_tokens),
        ):
            for key, value in theirs.items():
                mine[key] += value
        out.verify_calls += c.verify_calls
    return out


def _labels(labels: dict[str, str], rank: int, ranks: int) -> str:
    extra = {"dp_rank": str(rank)} if ranks > 1 else {}
    return ",".join(f'{k}="{v}"' for k, v in {**labels, **extra}.items())
