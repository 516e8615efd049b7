"""Aborted replies and the other field faults, read pure: SGLang's bodies, the retry rules.

The abort bodies are ``tests/data/sglang-abort/`` (derived from the 0.5.19 and 0.5.23 source, its
README cites each line) and any ``abort-*`` body recorded from a live server into
``tests/data/live-sglang-<release>/``; the simulated server's bodies are held to the same shapes.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from evals.replies import SseBuffer, finished
from evals.responses import StreamError, abort_detail, parse_chat_response, parse_chat_stream
from evals.retry_policy import RetryBudget, rate_limit_spent, retry_after_s, retry_wait
from pipeline.simserver import aborts, payloads
from pipeline.simserver.faults import RATE_FAULT_ORDER, Faults, rate_fault
from pipeline.simserver.model import Completion
from pipeline.simserver.served import Flavour, Served
from pipeline.simserver.spec import draw_spec, thresholds

DATA = Path(__file__).resolve().parents[1] / "data"
DERIVED = DATA / "sglang-abort"
# Derived bodies and any recorded from a live server (a chat completion, an HTTP error body or a
# /generate answer; a chat or /generate stream).
BODIES = sorted(DERIVED.glob("abort-*.json")) + sorted(DATA.glob("live-sglang-*/abort-*.json"))
STREAMS = sorted(DERIVED.glob("abort-*.txt")) + sorted(DATA.glob("live-sglang-*/abort-*.txt"))


def events(path: Path) -> list[object]:
    buffer, out = SseBuffer(), []
    for line in path.read_text().splitlines():
        data = buffer.feed(line)
        if data is not None:
            out.append(json.loads(data))
    return out


@pytest.mark.parametrize("path", BODIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_aborted_body_is_never_an_answer(path: Path) -> None:
    body = json.loads(path.read_text())
    if body.get("object") == "error":  # an abort with a status, not streamed: an HTTP error
        assert isinstance(body["message"], str) and body["code"] >= 400
        return
    if "choices" not in body:  # /generate: the abort object in meta_info, HTTP 200
        assert abort_detail(body["meta_info"])[0] is not None
        return
    result = parse_chat_response(body)
    assert result.finish_reason == "abort"
    got = finished(result, 200)
    assert got.result is None and got.error_kind == "aborted"
    assert got.curable == (result.finish_status is None or result.finish_status >= 500)
    assert "the server aborted the reply" in str(got.error)


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_streamed_abort_is_an_abort_or_an_error_object(path: Path) -> None:
    chunks = events(path)
    errors = [c for c in chunks if isinstance(c, dict) and isinstance(c.get("error"), dict)]
    if errors:
        with pytest.raises(StreamError) as err:
            parse_chat_stream(chunks)
        assert err.value.code == errors[0]["error"]["code"]
        return
    if not any(isinstance(c, dict) and "choices" in c for c in chunks):  # a /generate stream
        assert abort_detail(chunks[-1]["meta_info"])[0] is not None  # type: ignore[index]
        return
    got = finished(parse_chat_stream(chunks), 200)
    assert got.error_kind == "aborted" and got.result is None and got.curable


@pytest.mark.parametrize(
    ("finish_reason", "kind", "curable"),
    [
        ({"type": "abort", "message": "Aborted", "status_code": None, "err_type": None},
         "aborted", True),
        ({"type": "abort", "message": "m", "status_code": 503, "err_type": None}, "aborted", True),
        ({"type": "abort", "message": "m", "status_code": 429, "err_type": None},
         "aborted", False),  # 0.5.19 passes a non-400 4xx through as a 200: it aborts again
        ({"type": "stop", "matched": 1}, None, True),
        ({"type": "length", "length": 4}, None, True),
    ],
)  # fmt: skip
def test_what_a_finish_reason_makes_of_a_reply(finish_reason, kind, curable) -> None:
    body = json.loads((DERIVED / "abort-chat-0.5.23.json").read_text())
    choice = body["choices"][0]
    choice["meta_info"]["finish_reason"] = finish_reason
    choice["finish_reason"] = finish_reason["type"]
    got = finished(parse_chat_response(body), 200)
    assert (got.error_kind, got.curable) == (kind, curable)


def served(finish: str) -> Served:
    words = tuple(["w"] + [" w"] * 9)
    draw = draw_spec(random.Random(0), 10, thresholds(0.6, 3))
    completion = Completion(words, finish, "q", "mcq", None, None)
    return Served("rid", completion, 12, draw, 1000.0, 1000.1, 1000.3, 1000.5)


def shape(value: object) -> object:
    """Keys all the way down (values left out): what two bodies must share."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items() if k != "spec_correct_drafts_histogram"}
    if isinstance(value, list):
        return [shape(v) for v in value[:1]]
    return None


@pytest.mark.parametrize("release", ["0.5.19", "0.5.23"])
def test_the_simulated_abort_body_has_the_derived_shape(release: str) -> None:
    flavour = Flavour(release, 4, timing_fields=True)
    body = payloads.chat_response([served("abort")], flavour, "default", True, True, 1000.6)
    derived = json.loads((DERIVED / f"abort-chat-{release}.json").read_text())
    assert shape(body) == shape(derived)
    meta = body["choices"][0]["meta_info"]
    assert meta["finish_reason"] == derived["choices"][0]["meta_info"]["finish_reason"]
    assert body["choices"][0]["finish_reason"] == "abort"
    assert body["choices"][0]["matched_stop"] is None


@pytest.mark.parametrize("status", aborts.ABORT_STATUSES)
def test_the_simulated_abort_with_a_status_sends_sglangs_error_bodies(status: int) -> None:
    http = aborts.abort_http_body(status)
    assert set(http) == {"object", "message", "type", "param", "code"} and http["code"] == status
    if status in (400, 503):
        assert http == json.loads((DERIVED / f"abort-chat-http-{status}.json").read_text())
    streamed = aborts.stream_error_event(status)
    assert set(streamed["error"]) == set(http) and streamed["error"]["code"] == status
    with pytest.raises(StreamError) as err:
        parse_chat_stream([streamed])
    assert err.value.code == status


def test_a_reply_made_not_utf8_cannot_be_decoded() -> None:
    body = json.dumps({"choices": [{"message": {"content": "x"}}]}).encode()
    with pytest.raises(UnicodeDecodeError):
        aborts.not_utf8(body).decode("utf-8")
    with pytest.raises(UnicodeDecodeError):
        aborts.event_not_utf8({"a": 1}).decode("utf-8")


BUDGET = RetryBudget(max_retries=2, backoff_s=0.5, rate_limit_retries=3, rate_limit_wait_s=10.0)


@pytest.mark.parametrize(
    ("kind", "retried", "retry_after", "curable", "wait"),
    [
        (None, [], None, True, None),  # succeeded
        ("aborted", [], None, True, 0.5),
        ("aborted", ["aborted"], None, True, 1.0),  # doubling
        ("aborted", ["http_5xx", "aborted"], None, True, None),  # max_retries shared
        ("aborted", [], None, False, None),  # a 4xx abort
        ("unfinished", ["rate_limited"] * 3, None, True, 0.5),  # 429s do not use it up
        ("stream_error", [], None, True, 0.5),
        ("stream_error", ["stream_error"], None, True, None),  # once
        ("invalid_utf8", ["stream_error"], None, True, 0.5),  # once per kind
        ("invalid_utf8", ["invalid_utf8"], None, True, None),
        ("rate_limited", [], 3.0, True, 3.0),  # the server's Retry-After
        ("rate_limited", ["rate_limited"], None, True, 1.0),  # none given: the back-off
        ("rate_limited", [], 11.0, True, None),  # beyond the wait budget: now, not later
        ("rate_limited", ["rate_limited"] * 3, 1.0, True, None),  # beyond the count
        ("http_4xx", [], None, True, None),
        ("timeout", [], None, True, None),
        ("malformed", [], None, True, None),
    ],
)
def test_retry_wait(kind, retried, retry_after, curable, wait) -> None:
    assert retry_wait(kind, retried, BUDGET, retry_after, curable) == wait


def test_the_429_wait_budget_is_per_request_and_spent_by_each_wait() -> None:
    spent = rate_limit_spent(BUDGET, 8.0)
    assert retry_wait("rate_limited", ["rate_limited"], spent, 2.0) == 2.0
    assert retry_wait("rate_limited", ["rate_limited"], spent, 2.5) is None
    assert rate_limit_spent(BUDGET, 20.0).rate_limit_wait_s == 0.0


NOW = 1_796_137_536.0  # Fri, 04 Dec 2026 ... (any fixed instant)


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("2", 2.0),
        (" 0 ", 0.0),
        (None, None),
        ("", None),
        ("-1", None),  # not delay-seconds
        ("1.5", None),  # delay-seconds is an integer
        ("soon", None),
    ],
)
def test_retry_after_seconds(header, wait) -> None:
    assert retry_after_s(header, NOW) == wait


def test_retry_after_http_date() -> None:
    from email.utils import formatdate

    assert retry_after_s(formatdate(NOW + 7, usegmt=True), NOW) == pytest.approx(7.0)
    assert retry_after_s(formatdate(NOW - 60, usegmt=True), NOW) == 0.0  # past: now
    assert retry_after_s("Fri, 04 Dec 2026 18:00:02", NOW) is None  # no zone: not an HTTP date


def test_new_fault_rates_leave_the_first_four_draws_as_they_were() -> None:
    old = Faults(rates=(0.2, 0.2, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0))
    new = dataclasses.replace(old, rates=(0.2, 0.2, 0.0, 0.2, 0.3, 0.0, 0.0, 0.0, 0.0))
    draws = [(rate_fault(old, 0, f"p{i}", 0), rate_fault(new, 0, f"p{i}", 0)) for i in range(400)]
    assert all(b == a for a, b in draws if a is not None)  # the old faults hit alike
    hits = sum(b == "abort" for _, b in draws)
    assert 0.1 * 400 < hits < 0.3 * 400  # 0.3 of what the old faults leave
    assert len(RATE_FAULT_ORDER) == len(old.rates)


def test_the_live_0523_abort_has_the_derived_shape_and_finish_reason() -> None:
    """What a real 0.5.23 server sent for /abort_request (H200, 2026-12-04) is the derived body."""
    live = json.loads((DATA / "live-sglang-0.5.23/abort-chat.json").read_text())
    derived = json.loads((DERIVED / "abort-chat-0.5.23.json").read_text())
    assert shape(live) == shape(derived)
    finish = live["choices"][0]["meta_info"]["finish_reason"]
    assert finish == derived["choices"][0]["meta_info"]["finish_reason"]
    assert live["choices"][0]["message"]["content"]  # text came back: graded, were it not refused
