"""Record a live SGLang server's raw bodies as test fixtures (the 0.5.19 set, for any release).

    python3 record_bodies.py URL OUTDIR

Writes, in this order (so ``server_info_before_requests`` precedes every request after a flush):
``flush_cache.json``, ``server_info_before_requests.json``, ``v1_models.json``, ``model_info.json``,
``chat_completion_return_meta_info_and_spec_details.json`` (the request the pipeline sends),
``chat_completion_stream.txt`` (the raw SSE lines of a streamed chat, ``[DONE]`` included),
``generate.json`` (native ``/generate``), ``server_info_after_requests.json``, ``metrics.txt``
(Prometheus text) and ``requests.json`` (every request body and HTTP status, for the README).
Standard library only: it runs beside any SGLang on the GPU host.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MESSAGES = [{"role": "user", "content": "What is 17 + 25? Answer with the number."}]
CHAT = {"model": "default", "messages": MESSAGES, "max_tokens": 48, "temperature": 0.0}
META = {"return_meta_info": True, "return_spec_tokens_details": True}


def call(url: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
    """GET (no body) or POST JSON; return the status and the raw body, errors included."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def plan() -> list[tuple[str, str, dict[str, Any] | None]]:
    """(file, endpoint, body) in recording order; body None means GET."""
    return [
        ("flush_cache.json", "/flush_cache", {}),
        ("server_info_before_requests.json", "/server_info", None),
        ("v1_models.json", "/v1/models", None),
        ("model_info.json", "/model_info", None),
        (
            "chat_completion_return_meta_info_and_spec_details.json",
            "/v1/chat/completions",
            {**CHAT, **META},
        ),
        (
            "chat_completion_stream.txt",
            "/v1/chat/completions",
            {**CHAT, "stream": True, "stream_options": {"include_usage": True}},
        ),
        (
            "generate.json",
            "/generate",
            {
                "text": MESSAGES[0]["content"],
                "sampling_params": {"max_new_tokens": 48, "temperature": 0.0},
            },
        ),
        ("server_info_after_requests.json", "/server_info", None),
        ("metrics.txt", "/metrics", None),
    ]


def pretty(name: str, raw: bytes) -> bytes:
    """Indent JSON bodies as the 0.5.19 fixtures are; anything else stays as it came."""
    if not name.endswith(".json"):
        return raw
    try:
        return (json.dumps(json.loads(raw), indent=1) + "\n").encode()
    except ValueError:
        return raw


def main(argv: list[str]) -> int:
    """Record every body of :func:`plan` from ``argv[0]`` into ``argv[1]``."""
    base, out = argv[0].rstrip("/"), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    log = []
    for name, endpoint, body in plan():
        status, raw = call(base + endpoint, body)
        (out / name).write_bytes(pretty(name, raw))
        log.append({"file": name, "endpoint": endpoint, "body": body, "status": status})
        print(f"record_bodies: {endpoint} -> {status}, {len(raw)} bytes -> {name}")
    (out / "requests.json").write_text(json.dumps(log, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
