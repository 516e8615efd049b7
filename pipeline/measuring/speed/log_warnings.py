"""Warnings in the server's log that say a variant's speed has a cost of its release (pure).

SGLang 0.5.23 feeds fmha_v2 prefill its paged K/V without a copy, but logs a warning each time it
cannot and copies the batch's KV pages instead (0.5.19-0.5.22 copy the layer's whole KV pool on
every fmha_v2 prefill, silently). A speed figure taken while that warning was logged measures the
copy too, so the speed block carries it and the report shows it beside the ratios.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.version_ranges import VersionError, in_range, parse_version
from pipeline.results.nested_schema import LogWarningJson


@dataclass(frozen=True)
class LogWarning:
    """A server-log line that changes what a speed figure means."""

    kind: str
    text: str  # a part of the line, as SGLang prints it
    meaning: str


LOG_WARNINGS = (
    LogWarning(
        "fmha_v2_kv_copy",
        "K/V caches are not contiguous block-aligned halves of one allocation",
        "fmha_v2 prefill copied the batch's KV pages on every call (SGLang 0.5.23's zero-copy "
        "input did not apply): its prefill time includes the copy",
    ),
)


@dataclass(frozen=True)
class ReleaseCost:
    """A cost a prefill kernel pays on some SGLang releases only (read from their wheels)."""

    kernel: str  # what runs.prefill names
    since: str | None  # first release that pays it
    until: str | None  # first release that does not (half-open)
    note: str


RELEASE_COSTS = (
    ReleaseCost(
        "fmha_v2", "0.5.19", "0.5.23",
        "SGLang 0.5.19-0.5.22 copy the layer's whole KV pool (torch.stack of K and V) on every "
        "fmha_v2 prefill call, so its prefill time includes a copy that grows with the pool "
        "(--mem-fraction-static); 0.5.23 reads the pages in place unless it logs that it copies",
    ),
)  # fmt: skip


def release_costs(prefill_kernel: str | None, version: str | None) -> list[str]:
    """What the cell's prefill kernel pays on its SGLang release alone (empty: nothing known)."""
    try:
        found = parse_version(version) if version else None
    except VersionError:
        return []
    return [
        cost.note
        for cost in RELEASE_COSTS
        if found is not None
        and cost.kernel == prefill_kernel
        and in_range(found, cost.since, cost.until)
    ]


def speed_log_warnings(log_text: str) -> list[LogWarningJson]:
    """Each known warning the log holds: its kind, meaning, how often and its first line."""
    lines = log_text.splitlines()
    found: list[LogWarningJson] = []
    for warning in LOG_WARNINGS:
        hits = [line.strip() for line in lines if warning.text in line]
        if hits:
            found.append({"kind": warning.kind, "meaning": warning.meaning,
                          "count": len(hits), "line": hits[0]})  # fmt: skip
    return found
