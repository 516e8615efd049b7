"""Each ``server.kind`` and what it means, from the one module that decides it."""

from __future__ import annotations

import sys

import pytest

from pipeline.config.schema import ServerConf
from pipeline.serving.server_command import program
from pipeline.serving.server_kind import KINDS, ServerPlan, server_kind

# kind -> (launched, simulated, docker, GPU needed on this host, launcher program)
TRAITS = {
    "simulated": (True, True, False, False, [sys.executable, "-m", "pipeline.simserver"]),
    "sglang": (True, False, False, True, [sys.executable, "-m", "sglang.launch_server"]),
    "docker": (True, False, True, True, ["python3", "-m", "sglang.launch_server"]),
    "external": (False, False, False, False, None),
}


def test_the_table_names_every_kind_the_schema_lists() -> None:
    assert set(KINDS) == set(TRAITS)


@pytest.mark.parametrize("name", sorted(TRAITS))
def test_traits_of_each_kind(name: str) -> None:
    launched, simulated, docker, gpu_here, launcher = TRAITS[name]
    kind = server_kind(ServerConf(kind=name))
    assert (kind.launched, kind.external) == (launched, not launched)
    assert (kind.simulated, kind.docker, kind.gpu_here) == (simulated, docker, gpu_here)
    if launcher is None:
        with pytest.raises(ValueError, match="starts no process"):
            program(ServerPlan.of(ServerConf(kind=name)))
    else:
        assert program(ServerPlan.of(ServerConf(kind=name))) == launcher


def test_a_set_command_replaces_the_kinds_program() -> None:
    assert program(ServerPlan.of(ServerConf(kind="sglang", command=["srun", "python"]))) == [
        "srun",
        "python",
    ]


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"server.kind='vllm' .*simulated, sglang, docker"):
        server_kind(ServerConf(kind="vllm"))
