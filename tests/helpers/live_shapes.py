"""Shapes of recorded SGLang bodies against the simulated server's, for the live contract tests.

``shape`` reduces a body to its nested key structure (dicts by keys, lists by their first element,
leaves by kind) and ``differences`` names where two shapes part; ``stream_kinds`` sorts a chat
stream's chunks into role, content, finish, sglext and usage chunks so each kind is compared with
its recorded twin. Used by ``tests/integration/test_live_contract*.py`` for every release.
"""

from __future__ import annotations

import json
import shlex
import urllib.request
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"


def live_dir(release: str) -> Path:
    """The folder of a release's recorded bodies."""
    return DATA / f"live-sglang-{release}"


def shape(value: Any) -> Any:
    """Nested key structure: dicts by keys, lists by their first element, leaves by kind."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if value is None:
        return None
    return (
        "number"
        if isinstance(value, int | float) and not isinstance(value, bool)
        else type(value).__name__
    )


def differences(live_shape: Any, sim_shape: Any, path: str = "$") -> list[str]:
    """Where two shapes differ (a null leaf on either side matches anything)."""
    if live_shape is None or sim_shape is None:
        return []
    if isinstance(live_shape, dict) and isinstance(sim_shape, dict):
        out = [f"{path}.{k}: missing in simulated" for k in live_shape.keys() - sim_shape.keys()]
        out += [f"{path}.{k}: not in live" for k in sim_shape.keys() - live_shape.keys()]
        for k in live_shape.keys() & sim_shape.keys():
            out += differences(live_shape[k], sim_shape[k], f"{path}.{k}")
        return out
    if isinstance(live_shape, list) and isinstance(sim_shape, list):
        return (
            differences(live_shape[0], sim_shape[0], path + "[0]")
            if live_shape and sim_shape
            else []
        )
    return (
        [] if live_shape == sim_shape else [f"{path}: live {live_shape} vs simulated {sim_shape}"]
    )


def sse_events(text: str) -> list[str]:
    """The ``data:`` payloads of an SSE body, ``[DONE]`` included, in order."""
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def stream_kinds(text: str) -> dict[str, list[Any]]:
    """A chat stream's decoded chunks by kind; ``done`` holds ``[DONE]`` if the stream ended so.

    Kinds: ``role`` (its delta has a role), ``content`` (content, no finish reason), ``finish``
    (a finish reason), ``sglext`` and ``usage`` (no choices, carrying that key).
    """
    kinds: dict[str, list[Any]] = {k: [] for k in ("role", "content", "finish", "sglext", "usage")}
    kinds["done"] = []
    for data in sse_events(text):
        if data == "[DONE]":
            kinds["done"].append(data)
            continue
        chunk = json.loads(data)
        choice = chunk["choices"][0] if chunk["choices"] else None
        if choice is None:
            kinds["sglext" if "sglext" in chunk else "usage"].append(chunk)
        elif "role" in choice["delta"]:
            kinds["role"].append(chunk)
        else:
            kinds["finish" if choice["finish_reason"] else "content"].append(chunk)
    return kinds


def call(url: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """GET (no body) or POST JSON, ``/flush_cache`` always POST; the status and decoded body."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url + path,
        data=data,
        method="POST" if data or path == "/flush_cache" else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw.decode()


def recorded_launch(release: str) -> list[str]:
    """The recorded server's own flags (``launch_command``), without its host and port."""
    info = json.loads((live_dir(release) / "server_info_before_requests.json").read_text())
    words = shlex.split(info["launch_command"])
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--host", "--port"):
            skip = True
        else:
            out.append(word)
    return out
