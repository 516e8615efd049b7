"""SGLang's launch argv as the simulated server reads it.

The parser mirrors ``python -m sglang.launch_server`` for the flags that change what the server
reports or does (argparse with ``allow_abbrev=True``, so ``--tp 4`` works as in SGLang). Other
SGLang flags are accepted: a flag whose name is a ``/server_info`` key is stored under that key,
anything else is logged as ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.simserver.surface import surface_for

GRAMMAR_BACKEND_CHOICES = ["xgrammar", "outlines", "llguidance", "none"]


def build_parser(version: str) -> argparse.ArgumentParser:
    """SGLang's launch parser, restricted to the flags the simulation acts on.

    Args:
        version: the SGLang release whose choice lists to use (0.5.19 or 0.5.23).
    """
    p = argparse.ArgumentParser(prog="sglang serve", allow_abbrev=True)
    p.add_argument("--sim-config", required=True, help="simulated model (JSON, SimulatedConf)")
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tokenizer-path")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--tp-size", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    p.add_argument("--dp-size", "--data-parallel-size", dest="dp_size", type=int, default=1)
    p.add_argument("--served-model-name")
    surface = surface_for(version)
    attn = list(surface.attention_backends)
    for flag in ("attention", "prefill-attention", "decode-attention"):
        p.add_argument(f"--{flag}-backend", choices=attn)
    _add_speculative(p, version)
    p.add_argument("--kv-cache-dtype", default="auto", choices=list(surface.kv_cache_dtypes))
    for flag in (
        "page-size", "random-seed", "max-running-requests", "context-length", "max-total-tokens",
    ):  # fmt: skip
        p.add_argument(f"--{flag}", type=int)
    p.add_argument("--chunked-prefill-size", type=int)
    p.add_argument("--mem-fraction-static", type=float)
    p.add_argument("--decode-log-interval", type=int, default=40)
    p.add_argument("--api-key")
    p.add_argument("--admin-api-key")  # only this key opens /flush_cache when set
    p.add_argument("--reasoning-parser")
    p.add_argument("--tool-call-parser")
    p.add_argument("--grammar-backend", choices=GRAMMAR_BACKEND_CHOICES)
    p.add_argument("--log-level", default="info", type=str.lower,
                   choices=["debug", "info", "warning", "error", "critical"])  # fmt: skip
    for flag in (
        "enable-metrics", "disable-radix-cache", "trust-remote-code", "disable-cuda-graph",
        "enable-deterministic-inference", "disable-overlap-schedule", "skip-server-warmup",
    ):  # fmt: skip
        p.add_argument(f"--{flag}", action="store_true")
    return p


def _add_speculative(p: argparse.ArgumentParser, version: str) -> None:
    p.add_argument("--speculative-algorithm", type=str.upper)
    p.add_argument(
        "--speculative-draft-model-path", "--speculative-draft-model",
        dest="speculative_draft_model_path",
    )  # fmt: skip
    for name in ("num-steps", "eagle-topk", "num-draft-tokens"):
        p.add_argument(f"--speculative-{name}", type=int)
    p.add_argument("--speculative-attention-mode", default="prefill", choices=["prefill", "decode"])
    p.add_argument(
        "--speculative-draft-attention-backend",
        choices=list(surface_for(version).draft_attention_backends),
    )


def sim_config_path(argv: Sequence[str]) -> str | None:
    """The ``--sim-config`` value, read before the version-dependent parser is built."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--sim-config")
    ns, _ = pre.parse_known_args(list(argv))
    return ns.sim_config


def parse_argv(argv: Sequence[str], version: str) -> tuple[argparse.Namespace, list[str]]:
    """Parse SGLang's argv; returns the namespace and the flags it does not know.

    Raises:
        SystemExit: as argparse does (exit code 2) on a bad value or a missing --model-path.
    """
    return build_parser(version).parse_known_args(list(argv))


def template_flags(
    unknown: Sequence[str], template: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Split unknown flags into ``/server_info`` keys (with typed values) and ignored words.

    A flag ``--foo-bar`` whose key ``foo_bar`` is in ``template`` takes the next word as its value
    (converted to the type of the template's value), or ``True`` when the template holds a bool.
    """
    values: dict[str, Any] = {}
    ignored: list[str] = []
    words = list(unknown)
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, inline = word.partition("=")
        key = flag[2:].replace("-", "_") if flag.startswith("--") else ""
        if key not in template:
            ignored.append(word)
            i += 1
            continue
        default = template[key]
        if isinstance(default, bool) and not eq:
            values[key] = True
            i += 1
            continue
        raw = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
        values[key] = _typed_like(default, raw)
        i += 1 if eq else 2
    return values, ignored


def _typed_like(default: Any, raw: str) -> Any:
    """Convert ``raw`` to the type of ``default`` where unambiguous; else keep the string."""
    try:
        if isinstance(default, bool):
            return raw.lower() in ("1", "true", "yes")
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        pass
    return raw
