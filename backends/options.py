"""Launch options that do not belong to a model or backend variant (server-level settings).

Kept apart from ``backends.launch`` so that the pre-flight can read them without importing the
argv builder (``backends.launch`` re-exports ``LaunchOptions``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchOptions:
    """Server settings shared by every cell of a run."""

    host: str = "127.0.0.1"
    port: int = 30000
    random_seed: int | None = 0  # SGLang picks a random seed when unset: always pass one
    mem_fraction_static: float | None = None
    max_running_requests: int | None = None  # None: 48 with speculative decoding
    enable_metrics: bool = True
    api_key: str | None = None
    admin_api_key: str | None = None  # --admin-api-key: guards /flush_cache
    extra_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # server.env: SGLANG_* variables some rules read
