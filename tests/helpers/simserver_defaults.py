"""Build the simulated server's SGLang defaults, one file per release, from recorded live responses.

``pipeline/simserver/sglang_<release>.json`` is what this builds from the responses of a live SGLang
server of that release in ``tests/data/live-sglang-<release>/`` (launched with the flags in its
``LAUNCH_SET``): ``/server_info``'s server arguments with the flags that launch set put back to
their parser defaults, the keys only the top level or only ``internal_states[i]`` carries, the
per-rank memory figures, the ``SGLANG_*`` variables SGLang sets itself, the start-up durations,
the ``cuda_graph_config`` layout and ``/model_info``'s embedding block.
``tests/unit/test_simserver_defaults_file.py`` holds each committed file to this build. Rebuild
them after a new recording:

    .venv/bin/python -m tests.helpers.simserver_defaults --write
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[2]
RELEASES = ("0.5.19", "0.5.23")  # the releases with a live recording

# Flags both recorded launches set (tiny-llama / synth-llama, STANDALONE speculation, metrics on),
# each with its parser default (``server_args.py``'s ``ServerArgs``, the same in both wheels).
_LAUNCH_SET_COMMON: dict[str, Any] = {
    "model_path": None, "tokenizer_path": None, "mem_fraction_static": None,
    "max_running_requests": None, "chunked_prefill_size": None, "page_size": None,
    "random_seed": None, "served_model_name": None, "enable_metrics": False,
    "attention_backend": None, "decode_attention_backend": None,
    "prefill_attention_backend": None, "grammar_backend": None, "disable_cuda_graph": False,
    "speculative_algorithm": None, "speculative_draft_model_path": None,
    "speculative_draft_model_revision": None, "speculative_num_steps": None,
    "speculative_eagle_topk": None, "speculative_num_draft_tokens": None,
    "speculative_attention_mode": "prefill", "speculative_draft_attention_backend": None,
}  # fmt: skip
# What each launch set beyond that (the 0.5.23 argv is its /server_info ``launch_command``).
LAUNCH_SET: dict[str, dict[str, Any]] = {
    "0.5.19": _LAUNCH_SET_COMMON,
    "0.5.23": {
        **_LAUNCH_SET_COMMON, "context_length": None, "max_total_tokens": None, "port": 30000,
        "sampling_backend": None,
    },
}  # fmt: skip
# Top-level /server_info keys that are not server arguments: the scheduler's own fields, what the
# simulated server adds from its surface table (``launch_command``, ``frontend``), and
# ``cuda_graph_config``, which it builds from --disable-cuda-graph.
NOT_SERVER_ARGS = (
    "cuda_graph_config", "status", "max_total_num_tokens", "max_req_input_len", "startup_time",
    "internal_states", "version", "kv_events", "launch_command", "frontend",
)  # fmt: skip
# SGLANG_* variables the recorded runs set by hand (benchmarks/live_h200/); the rest of
# ``env_vars`` SGLang set itself.
HAND_SET_ENV = ("SGLANG_EXPOSE_OWN_ENV_VARS", "SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK")
# internal_states[i] keys the simulated server computes per rank (``info.internal_state``).
STATE_COMPUTED = (
    "world_size", "last_gen_throughput", "memory_usage", "startup_time",
    "effective_max_running_requests_per_dp", "avg_spec_accept_length", "env_vars",
)  # fmt: skip


def recorded_dir(release: str) -> Path:
    """Where a release's live bodies are."""
    return REPO / "tests" / "data" / f"live-sglang-{release}"


def defaults_file(release: str) -> Path:
    """The committed defaults file of a release."""
    return REPO / "pipeline" / "simserver" / f"sglang_{release}.json"


def _recorded(release: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((recorded_dir(release) / name).read_text(encoding="utf-8"))
    return found


def build(release: str = "0.5.19") -> dict[str, Any]:
    """The defaults file's content of ``release``, from its recordings."""
    info = _recorded(release, "server_info_after_requests.json")
    state = info["internal_states"][0]
    args = {k: v for k, v in info.items() if k not in NOT_SERVER_ARGS}
    unknown = sorted(set(LAUNCH_SET[release]) - set(args))
    if unknown:
        raise ValueError(f"LAUNCH_SET[{release!r}] names {unknown}, which /server_info lacks")
    source = recorded_dir(release).relative_to(REPO)
    return {
        "source": f"{source} (built by {Path(__file__).relative_to(REPO)})",
        "server_args": args | LAUNCH_SET[release],
        "top_level_only": [k for k in args if k not in state],
        "state_only": {k: v for k, v in state.items() if k not in info and k not in STATE_COMPUTED},
        "env_vars_set_by_sglang": {
            k: v for k, v in state["env_vars"].items() if k not in HAND_SET_ENV
        },
        "memory_usage": state["memory_usage"],
        "startup_time": info["startup_time"],
        "cuda_graph_config": info["cuda_graph_config"],
        "model_info_embedding": _recorded(release, "model_info.json")["embedding"],
    }


def text(release: str = "0.5.19") -> str:
    """The file as written: one key per line, in the recording's order."""
    return json.dumps(build(release), indent=1) + "\n"


def main() -> None:
    """Print whether each committed file is current; ``--write`` rebuilds them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the defaults files")
    write = parser.parse_args().write
    for release in RELEASES:
        path = defaults_file(release)
        if write:
            path.write_text(text(release), encoding="utf-8")
        current = path.read_text(encoding="utf-8") == text(release)
        print(f"{path.relative_to(REPO)}: {'current' if current else 'stale'}")


if __name__ == "__main__":
    main()
