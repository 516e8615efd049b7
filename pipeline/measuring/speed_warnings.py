"""Warnings in the server's log that say a variant's speed has a cost of its release (pure).

SGLang 0.5.23 feeds fmha_v2 prefill its paged K/V without a copy, but logs a warning each time it
cannot and copies the batch's KV pages instead (0.5.19-0.5.22 copy the layer's whole KV pool on
every fmha_v2 prefill, silently). A speed figure taken while that warning was logged measures the
copy too, so the speed block carries it and the report shows it beside the ratios.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def speed_log_warnings(log_text: str) -> list[dict[str, object]]:
    """Each known warning the log holds: its kind, meaning, how often and its first line."""
    lines = log_text.splitlines()
    found: list[dict[str, object]] = []
    for warning in LOG_WARNINGS:
        hits = [line.strip() for line in lines if warning.text in line]
        if hits:
            found.append({"kind": warning.kind, "meaning": warning.meaning,
                          "count": len(hits), "line": hits[0]})  # fmt: skip
    return found
