"""The rules of ``server.prestart_next`` (pure): what may share a GPU with a starting server."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.config.checks import config_problems
from pipeline.config.prestart_checks import (
    BASIC_LAUNCHER,
    launcher_problems,
    prestart_problems,
    timed_phases,
)
from pipeline.config.schema import RootConf


def conf(share: float | None = 0.45, kind: str = "simulated", **phases: bool) -> RootConf:
    root = RootConf()
    server = dataclasses.replace(
        root.server, kind=kind, prestart_next=True, mem_fraction_static=share
    )
    root = dataclasses.replace(root, server=server)
    for phase, on in phases.items():
        root = dataclasses.replace(
            root, **{phase: dataclasses.replace(getattr(root, phase), enabled=on)}
        )
    return root


def test_off_asks_nothing_and_an_accuracy_cell_at_045_may():
    assert prestart_problems(RootConf()) == []
    assert prestart_problems(conf()) == []
    assert launcher_problems(conf(), BASIC_LAUNCHER) == []


@pytest.mark.parametrize("phase", ["speed", "serving"])
def test_a_timed_phase_refuses_it_naming_both_keys(phase):
    (problem,) = prestart_problems(conf(**{phase: True}))
    assert problem.startswith("server.prestart_next=true shares the GPU")
    assert f"times {phase} ({phase}.enabled=true)" in problem
    assert timed_phases(conf(**{phase: True})) == [phase]
    assert problem in config_problems(conf(**{phase: True}))  # the sweep check asks it too


@pytest.mark.parametrize("share", [None, 0.0, 0.46, 0.9])
def test_two_servers_must_fit_each_at_most_045(share):
    (problem,) = prestart_problems(conf(share))
    assert "server.mem_fraction_static to at most 0.45" in problem and f"(it is {share})" in problem


def test_an_external_server_or_another_launcher_refuses_it():
    (problem,) = prestart_problems(conf(kind="external"))
    assert "server=external starts no server" in problem
    (other,) = launcher_problems(conf(), "hydra_plugins.x.LocalLauncher")
    assert "needs Hydra's basic launcher" in other and "LocalLauncher" in other
