"""Shared fixtures (shared functions live in tests/helpers/)."""

from __future__ import annotations

import pytest

from pipeline.config.schema import register_configs

register_configs()


@pytest.fixture
def fast_sim() -> list[str]:
    """Overrides that make the simulated server and the client quick for tests."""
    return [
        "server.simulated.startup_delay_s=0.2",
        "client.progress=false",
        "server.stop_grace_s=5",
        "server.startup_timeout_s=30",
    ]
