"""The full command line and environment that start a cell's server, per ``server.kind``.

The SGLang arguments come from ``backends.launch.plan_launch``; this module only adds the program
in front (SGLang, the simulated server or ``docker run``) and the environment around it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from evals.json_text import strict_dumps
from pipeline.config.schema import ServerConf
from pipeline.serving.server_kind import ServerPlan

SIM_CONFIG_FILE = "simulated_server.json"
SIM_ANSWER_KEY_FILE = "simulated_answer_key.jsonl"
SIM_LEDGER_FILE = "simulated_ledger.jsonl"


def program(server: ServerPlan) -> list[str]:
    """The launcher in front of SGLang's arguments."""
    if server.conf.command:
        return list(server.conf.command)
    if not server.kind.launched:
        raise ValueError(
            f"server.kind={server.kind.name!r} starts no process (choose another kind)"
        )
    return list(server.kind.program)


def docker_wrap(
    server: ServerConf, argv: Sequence[str], env: dict[str, str], name: str
) -> list[str]:
    """``docker run`` around the server argv; the added env goes in with ``-e``."""
    if not server.docker_image:
        raise ValueError(
            "server=docker needs server.docker_image (e.g. lmsysorg/sglang:v0.5.23-cu130)"
        )
    env_flags = [flag for key, value in env.items() for flag in ("-e", f"{key}={value}")]
    return [
        "docker",
        "run",
        "--rm",
        "--name",
        name,
        *server.docker_args,
        *env_flags,
        server.docker_image,
        *argv,
    ]


def write_simulated_config(
    server: ServerConf, cell_dir: Path, answer_key: Sequence[Mapping[str, object]]
) -> Path:
    """Write the simulated model's settings and answer key into the cell folder."""
    key_path = cell_dir / SIM_ANSWER_KEY_FILE
    with key_path.open("w", encoding="utf-8") as fh:
        for entry in answer_key:
            fh.write(strict_dumps(entry) + "\n")
    settings = dataclasses.asdict(server.simulated)
    for pipeline_only in ("gpu_name", "gpu_compute_capability"):  # read by the pre-flight only
        settings.pop(pipeline_only)
    settings.update(answer_key=str(key_path), ledger=str(cell_dir / SIM_LEDGER_FILE))
    path = cell_dir / SIM_CONFIG_FILE
    path.write_text(strict_dumps(settings, indent=1), encoding="utf-8")
    return path


def server_argv(
    server: ServerPlan,
    sglang_args: Sequence[str],
    added_env: dict[str, str],
    cell_dir: Path,
    answer_key: Sequence[Mapping[str, object]],
) -> list[str]:
    """The complete argv that starts the server of a cell.

    ``server.extra_args`` are already in ``sglang_args``: ``backends.launch.build_args`` puts them
    last (so they win), the only place they enter the argv.
    """
    argv = [*program(server), *sglang_args]
    if server.kind.simulated:
        argv += ["--sim-config", str(write_simulated_config(server.conf, cell_dir, answer_key))]
    if server.kind.docker:
        argv = docker_wrap(server.conf, argv, added_env, name=f"mtp-eval-{os.getpid()}")
    return argv


def server_env(server: ServerConf, added_env: dict[str, str]) -> dict[str, str]:
    """The server's environment: ours, plus the plan's and the config's variables."""
    return {**os.environ, **added_env, **server.env}
