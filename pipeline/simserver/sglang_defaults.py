"""Each imitated SGLang release's resolved server arguments and live figures, as recorded.

The data is ``sglang_<release>.json`` beside this module, built from a live server's recorded
responses (``tests/data/live-sglang-<release>/``) by ``tests/helpers/simserver_defaults.py``, with
the flags that launch set put back to their parser defaults; a test holds each file to that build.
The simulated server starts from its release's table so that ``/server_info`` carries every key
real SGLang does; ``resolve`` overwrites the flags it understands. ``cuda_graph_config`` is built
in ``info`` from the recorded layout because its backends depend on the flags.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final


@dataclass(frozen=True)
class ReleaseDefaults:
    """One release's recorded ``/server_info`` and ``/model_info`` material."""

    server_args: dict[str, Any]  # every server argument, launch flags at their parser defaults
    top_level_only: tuple[str, ...]  # server arguments internal_states[i] does not repeat
    state_only: dict[str, Any]  # what internal_states[i] adds beside the computed fields
    env_vars_set_by_sglang: dict[str, str]  # env_vars entries nobody set (SGLang sets them)
    memory_usage: dict[str, Any]  # internal_states[i]["memory_usage"] (GiB and tokens)
    startup_time: dict[str, Any]  # /server_info "startup_time" (seconds)
    cuda_graph_config: dict[str, Any]  # the recorded layout, per phase
    model_info_embedding: dict[str, Any]  # /model_info "embedding" of a generative model


def defaults_file(release: str) -> Path:
    """The defaults file of a release."""
    return Path(__file__).with_name(f"sglang_{release}.json")


@functools.cache
def defaults_for(release: str) -> ReleaseDefaults:
    """The recorded defaults of ``release`` (read once).

    Raises:
        FileNotFoundError: no recording of that release was built into a defaults file.
    """
    data = json.loads(defaults_file(release).read_text(encoding="utf-8"))
    return ReleaseDefaults(
        server_args=data["server_args"],
        top_level_only=tuple(data["top_level_only"]),
        state_only=data["state_only"],
        env_vars_set_by_sglang=data["env_vars_set_by_sglang"],
        memory_usage=data["memory_usage"],
        startup_time=data["startup_time"],
        cuda_graph_config=data["cuda_graph_config"],
        model_info_embedding=data["model_info_embedding"],
    )


DEFAULTS_FILE = defaults_file("0.5.19")
SERVER_ARGS_0_5_19: Final[dict[str, Any]] = defaults_for("0.5.19").server_args
