"""What SGLang sends for an aborted request, and the other broken replies the faults inject (pure).

An abort is ``FINISH_ABORT.to_json`` in ``meta_info.finish_reason`` (``srt/managers/
schedule_batch.py``: 0.5.19 line 289, 0.5.23 line 332; alike in both). What the client then
sees depends on the abort's HTTP status (``tests/data/sglang-abort/README.md`` cites each line):
- none (``/abort_request``, a client gone, ``abort_all``): a normal reply whose
  ``finish_reason`` is ``"abort"`` and whose text stops where the request was cut, HTTP 200,
  streamed or not;
- 400 (``BadRequestError``): not streamed, HTTP 400 with the error object of
  ``create_error_response``; streamed, ``data: {"error": {...}}`` with ``type: "BAD_REQUEST"``;
- 500 / 503 (memory pressure, a timeout): not streamed, that HTTP status with the error object
  of ``http_server``'s ``HTTPException`` handler (``type`` is the code as a string); streamed,
  the error object with ``type`` the status name (``SERVICE_UNAVAILABLE``).
Both releases answer alike for these statuses.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from pipeline.simserver.reply_types import AbortFinish, ErrorBody, StreamError

ABORT_STATUSES = (400, 500, 503)  # what the simulated server can abort with, besides none
# The messages SGLang aborts with (0.5.23: managers/utils.py lines 282-286 for an input over the
# limit, schedule_batch.py lines 3515-3519 and 3494-3500 for memory pressure).
_MESSAGES = {
    None: "Aborted",
    400: "Input length (40000 tokens) exceeds the maximum allowed length (32766 tokens). "
    "Use a shorter input or enable --allow-auto-truncate.",
    500: "Out of memory even after retracting all other requests in the decode batch. "
    "Aborting the last request.",
    503: "Retracted under decode memory pressure without a KV backup. Retry later.",
}
# A value the client must not decode: a lone continuation byte pair that is not UTF-8.
_NOT_UTF8 = b"\xc3\x28"
_CONTENT_KEY = b'"content": "'


def abort_finish(status: int | None = None) -> AbortFinish:
    """``meta_info.finish_reason`` of an aborted request (``FINISH_ABORT.to_json``)."""
    err_type = None
    if status == 400:
        err_type = "BadRequestError"
    elif status == 500:
        err_type = "InternalServerError"
    return {"type": "abort", "message": _MESSAGES[status], "status_code": status,
            "err_type": err_type}  # fmt: skip


def abort_http_body(status: int) -> ErrorBody:
    """The body of a non-streamed abort that carries an HTTP status (answered with it)."""
    kind = "BadRequestError" if status == 400 else str(status)
    return {"object": "error", "message": _MESSAGES[status], "type": kind, "param": None,
            "code": status}  # fmt: skip


def stream_error_event(status: int, message: str | None = None) -> StreamError:
    """``data: {"error": ...}`` of a stream (``create_streaming_error_response``)."""
    error: ErrorBody = {"object": "error", "message": message or _MESSAGES.get(status, "Aborted"),
             "type": HTTPStatus(status).name, "param": None, "code": status}  # fmt: skip
    return {"error": error}


def rate_limited_body() -> ErrorBody:
    """HTTP 429's body, as a gateway in front of SGLang (OpenAI's error shape) sends it."""
    return {"object": "error", "message": "Too many requests: retry after the given time",
            "type": "RateLimitError", "param": None, "code": 429}  # fmt: skip


def not_utf8(body: bytes) -> bytes:
    """``body`` with its first string content made invalid UTF-8 (a broken proxy's reply)."""
    if _CONTENT_KEY in body:
        return body.replace(_CONTENT_KEY, _CONTENT_KEY + _NOT_UTF8, 1)
    return body + _NOT_UTF8


def event_not_utf8(obj: Any) -> bytes:
    """One server-sent event whose text is not UTF-8."""
    return b"data: " + not_utf8(json.dumps(obj).encode()) + b"\n\n"
