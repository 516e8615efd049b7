"""Server-log warnings that change what a speed figure means (pure)."""

from __future__ import annotations

import pytest

from pipeline.measuring.speed.log_warnings import release_costs, speed_log_warnings

# SGLang 0.5.23's own line (its fmha_v2 prefill path, when the zero-copy input cannot apply).
COPY = (
    "[2026-12-01 10:00:00 TP0] fmha_v2 prefill: K/V caches are not contiguous block-aligned "
    "halves of one allocation, so every prefill copies the batch's KV pages (slow)."
)


def test_the_copy_warning_is_found_counted_and_kept_as_logged() -> None:
    (found,) = speed_log_warnings(f"start\n{COPY}\nserving\n{COPY}\n")
    assert found["kind"] == "fmha_v2_kv_copy" and found["count"] == 2
    assert found["line"] == COPY and "includes the copy" in str(found["meaning"])


def test_a_log_without_it_gives_nothing() -> None:
    assert speed_log_warnings("The server is fired up and ready to roll!\n") == []
    assert speed_log_warnings("") == []


@pytest.mark.parametrize(
    ("kernel", "version", "noted"),
    [
        ("fmha_v2", "0.5.19", True),
        ("fmha_v2", "0.5.22.post1", True),
        ("fmha_v2", "0.5.23", False),  # reads the pages in place (and logs when it cannot)
        ("fa3", "0.5.19", False),
        (None, "0.5.19", False),
        ("fmha_v2", None, False),  # the release unknown: nothing said
        ("fmha_v2", "not a version", False),
    ],
)
def test_a_prefill_kernels_release_cost_is_named(
    kernel: str | None, version: str | None, noted: bool
) -> None:
    notes = release_costs(kernel, version)
    assert bool(notes) is noted
    assert all("whole KV pool" in note for note in notes)
