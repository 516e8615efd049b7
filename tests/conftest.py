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


def _shared_fixture_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that uses one of our module- or session-scoped fixtures.

    Such a fixture is built once per worker: its tests go to one worker so that it is built
    once (a session fixture's group is its name, so ``demo_report``'s users share a worker; a
    module fixture's is its file). pytest's own session fixtures (``tmp_path_factory``) are not
    ours (their ``baseid`` is empty) and group nothing.
    """
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    ours = [(name, fixture.scope) for name in info.names_closure
            for fixture in info.name2fixturedefs.get(name, ())
            if fixture.baseid.startswith("tests")]  # fmt: skip
    sessions = sorted(name for name, scope in ours if scope == "session")
    if sessions:  # before a module's: the demo's users in other files share its worker
        return sessions[0]
    if any(scope in ("package", "module") for _, scope in ours):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests that share an expensive fixture; see ``_shared_fixture_group``."""
    for item in items:
        group = _shared_fixture_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
