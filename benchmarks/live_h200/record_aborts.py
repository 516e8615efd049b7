"""Record what a live SGLang server sends when a request is aborted or refused (issue 36 item 1).

    python3 record_aborts.py URL OUTDIR CONTEXT_LENGTH

Two ways a reply ends without an answer, each through the endpoints the pipeline uses:

- ``too_long_*``: a prompt of CONTEXT_LENGTH + 512 bytes (the trained model's byte-level
  tokenizer: one token a byte), chat (plain and streamed) and ``/generate``;
- ``abort_*``: a long generation (``ignore_eos``) cut by ``/abort_request`` with ``abort_all``
  about 1.5 s after it starts, chat (plain and streamed) and ``/generate``.

Writes one file per request (JSON bodies indented, SSE streams raw) and ``requests.json`` (each
body, HTTP status and seconds). Standard library only: it runs beside any SGLang on the GPU host.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

META = {"return_meta_info": True, "return_spec_tokens_details": True}
LONG_GEN = {"max_tokens": 4000, "temperature": 0.0, "ignore_eos": True}


def call(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST JSON; the status and the raw body, HTTP errors included."""
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def chat(content: str, extra: dict[str, Any]) -> dict[str, Any]:
    """A chat request as the pipeline sends it, with ``extra`` on top."""
    return {"model": "default", "messages": [{"role": "user", "content": content}], **META, **extra}


def plan(context_length: int) -> list[tuple[str, str, dict[str, Any], bool]]:
    """(file, endpoint, body, abort it mid-way) in recording order."""
    long_text = "x" * (context_length + 512)
    stream = {"stream": True, "stream_options": {"include_usage": True}}
    gen_long = {"max_new_tokens": 4000, "temperature": 0.0, "ignore_eos": True}
    return [
        ("too_long_chat.json", "/v1/chat/completions", chat(long_text, {"max_tokens": 8}), False),
        ("too_long_chat_stream.txt", "/v1/chat/completions",
         chat(long_text, {"max_tokens": 8, **stream}), False),
        ("too_long_generate.json", "/generate",
         {"text": long_text, "sampling_params": {"max_new_tokens": 8}, **META}, False),
        ("abort_chat.json", "/v1/chat/completions", chat("Count to ten.", LONG_GEN), True),
        ("abort_chat_stream.txt", "/v1/chat/completions",
         chat("Count to ten.", {**LONG_GEN, **stream}), True),
        ("abort_generate.json", "/generate",
         {"text": "Count to ten.", "sampling_params": gen_long, **META}, True),
    ]  # fmt: skip


def pretty(name: str, raw: bytes) -> bytes:
    """Indent JSON bodies; streams and anything unparsable stay as they came."""
    if not name.endswith(".json"):
        return raw
    try:
        return (json.dumps(json.loads(raw), indent=1) + "\n").encode()
    except ValueError:
        return raw


def abort_soon(base: str, delay_s: float) -> threading.Thread:
    """Ask the server to abort every request after ``delay_s`` (in a thread)."""

    def run() -> None:
        time.sleep(delay_s)
        call(base + "/abort_request", {"abort_all": True})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def main(argv: list[str]) -> int:
    """Record every request of :func:`plan` from ``argv[0]`` into ``argv[1]``."""
    base, out, context_length = argv[0].rstrip("/"), Path(argv[1]), int(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    log = []
    for name, endpoint, body, cut in plan(context_length):
        t0 = time.monotonic()
        aborter = abort_soon(base, 1.5) if cut else None
        status, raw = call(base + endpoint, body)
        if aborter is not None:
            aborter.join()
        seconds = round(time.monotonic() - t0, 3)
        (out / name).write_bytes(pretty(name, raw))
        shown = {k: (v if k not in ("text", "messages") else f"<{len(json.dumps(v))} chars>")
                 for k, v in body.items()}  # fmt: skip
        log.append({"file": name, "endpoint": endpoint, "body": shown, "aborted_after_s": 1.5 if cut
                    else None, "status": status, "seconds": seconds})  # fmt: skip
        print(f"record_aborts: {endpoint} -> {status}, {len(raw)} bytes, {seconds} s -> {name}")
    (out / "requests.json").write_text(json.dumps(log, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
