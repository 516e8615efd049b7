"""Build the simulated server's SGLang 0.5.19 defaults from the recorded live responses.

``pipeline/simserver/sglang_0.5.19.json`` is what this builds from the responses of a live SGLang
0.5.19 server in ``tests/data/live-sglang-0.5.19/`` (launched with the flags in ``LAUNCH_SET``):
``/server_info``'s server arguments with the flags that launch set put back to their parser
defaults, the per-rank memory figures, the start-up durations, the CUDA-graph batch sizes and
``/model_info``'s embedding block. ``tests/unit/test_simserver_defaults_file.py`` holds the
committed file to this build. Rebuild it after a new recording:

    .venv/bin/python -m tests.helpers.simserver_defaults --write
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[2]
RECORDED = REPO / "tests" / "data" / "live-sglang-0.5.19"
DEFAULTS_FILE = REPO / "pipeline" / "simserver" / "sglang_0.5.19.json"

# The flags the recorded server's launch set (tiny-llama, STANDALONE speculation, metrics on, no
# CUDA graphs), each with SGLang 0.5.19's parser default (``server_args.py``'s ``ServerArgs``).
LAUNCH_SET: dict[str, Any] = {
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
# Top-level /server_info keys that are not server arguments: the scheduler's own fields, and
# ``cuda_graph_config``, which the simulated server builds from --disable-cuda-graph.
NOT_SERVER_ARGS = (
    "cuda_graph_config", "status", "max_total_num_tokens", "max_req_input_len", "startup_time",
    "internal_states", "version", "kv_events",
)  # fmt: skip


def _recorded(name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    return found


def build() -> dict[str, Any]:
    """The defaults file's content, from the recordings."""
    info = _recorded("server_info_after_requests.json")
    args = {k: v for k, v in info.items() if k not in NOT_SERVER_ARGS}
    unknown = sorted(set(LAUNCH_SET) - set(args))
    if unknown:
        raise ValueError(f"LAUNCH_SET names {unknown}, which the recorded /server_info lacks")
    graphs = info["cuda_graph_config"]
    return {
        "source": f"{RECORDED.relative_to(REPO)} (built by {Path(__file__).relative_to(REPO)})",
        "server_args": args | LAUNCH_SET,
        "memory_usage": info["internal_states"][0]["memory_usage"],
        "startup_time": info["startup_time"],
        "cuda_graph_bs": {phase: graphs[phase]["bs"] for phase in ("decode", "prefill")},
        "model_info_embedding": _recorded("model_info.json")["embedding"],
    }


def text() -> str:
    """The file as written: one key per line, in the recording's order."""
    return json.dumps(build(), indent=1) + "\n"


def main() -> None:
    """Print whether the committed file is current; ``--write`` rebuilds it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {DEFAULTS_FILE.name}")
    if parser.parse_args().write:
        DEFAULTS_FILE.write_text(text(), encoding="utf-8")
    current = DEFAULTS_FILE.read_text(encoding="utf-8") == text()
    print(f"{DEFAULTS_FILE.relative_to(REPO)}: {'current' if current else 'stale'}")


if __name__ == "__main__":
    main()
