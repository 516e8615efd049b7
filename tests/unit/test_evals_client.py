from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from evals.client import build_chat_payload, chat_url
from evals.eval_conf import SamplingConf
from evals.progress import progress_bar
from evals.replies import SseBuffer, Unfinished, body_result

MESSAGES = [{"role": "user", "content": "q"}]


@pytest.mark.parametrize(
    ("sampling", "kwargs", "stream", "expected"),
    [
        (
            SamplingConf(),
            {},
            False,
            {"temperature": 0.0, "max_tokens": 2048, "return_meta_info": True},
        ),
        (
            SamplingConf(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, max_tokens=64, seed=1),
            {"enable_thinking": True},
            False,
            {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "max_tokens": 64,
             "seed": 1, "chat_template_kwargs": {"enable_thinking": True},
             "return_meta_info": True},
        ),
        (
            SamplingConf(temperature=None, max_tokens=None),  # type: ignore[arg-type]
            {},
            True,
            {"stream_options": {"include_usage": True}},
        ),
        (None, {}, False, {"return_meta_info": True}),
    ],
    ids=["defaults", "all_fields", "stream_model_defaults", "no_sampling"],
)  # fmt: skip
def test_build_chat_payload(
    sampling: SamplingConf | None, kwargs: dict[str, Any], stream: bool, expected: dict[str, Any]
) -> None:
    payload = build_chat_payload(MESSAGES, sampling, "served", kwargs, stream)
    base = {"model": "served", "messages": MESSAGES, "stream": stream,
            "return_spec_tokens_details": True}  # fmt: skip
    assert payload == base | expected


def test_payload_does_not_alias_inputs() -> None:
    kwargs = {"thinking": True}
    payload = build_chat_payload(MESSAGES, SamplingConf(), "m", kwargs, False)
    payload["messages"].append({"role": "assistant", "content": "x"})
    payload["chat_template_kwargs"]["thinking"] = False
    assert len(MESSAGES) == 1 and kwargs == {"thinking": True}


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://127.0.0.1:30000", "http://127.0.0.1:30000/v1/chat/completions"),
        ("http://127.0.0.1:30000/", "http://127.0.0.1:30000/v1/chat/completions"),
        ("http://h:1/v1", "http://h:1/v1/chat/completions"),
        ("http://h:1/v1/", "http://h:1/v1/chat/completions"),
        ("http://h:1/proxy", "http://h:1/proxy/v1/chat/completions"),
    ],
)
def test_chat_url(base: str, url: str) -> None:
    assert chat_url(base) == url


@pytest.mark.parametrize(
    ("lines", "events", "done"),
    [
        (['data: {"a": 1}', "", "data: [DONE]", ""], ['{"a": 1}'], True),
        (['data:{"a": 1}', ""], ['{"a": 1}'], False),
        ([": keep-alive", "", "event: x", "data: 1", "data: 2", ""], ["1\n2"], False),
        (["data: [DONE]"], [], True),
        (["", "", "data: 7"], ["7"], False),  # the last event may lack its blank line
    ],
)
def test_sse_buffer(lines: list[str], events: list[str], done: bool) -> None:
    buffer = SseBuffer()
    got = [data for line in lines if (data := buffer.feed(line)) is not None]
    tail = buffer.flush()
    assert got + ([tail] if tail is not None else []) == events
    assert buffer.done is done


def test_client_module_leaves_tqdm_unimported() -> None:
    # tqdm costs about 0.1 s of a cell's start-up; it is imported only when a bar is shown.
    code = "import sys, evals.client; sys.exit('tqdm' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# Under pytest stderr is not a terminal: progress is then a line now and then, never a tqdm bar.
@pytest.mark.parametrize(("progress", "kind"), [(False, "_NoBar"), (True, "LineProgress")])
def test_progress_off_a_terminal_is_lines_only_when_asked(progress: bool, kind: str) -> None:
    with progress_bar(progress, 3, "t") as bar:
        for _ in range(3):
            bar.update(1)
    assert type(bar).__name__ == kind


WHOLE = b'{"choices": [{"index": 0, "message": {"content": "Answer: B"}, "finish_reason": "stop"}]}'


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (WHOLE, "ok"),
        (WHOLE[: len(WHOLE) // 2], "unfinished"),  # cut inside a string
        (WHOLE[:37], "unfinished"),  # cut after a key's colon
        (WHOLE[:-1], "unfinished"),  # the last brace missing
        (b'{"choices": [{"index": 0, "message": }]}', "malformed"),  # whole, not JSON
    ],
    ids=["whole", "mid-string", "after-colon", "last-brace", "broken-inside"],
)
def test_a_body_cut_short_is_unfinished_and_a_broken_one_malformed(raw, outcome):
    try:
        body_result(raw)
        got = "ok"
    except Unfinished:
        got = "unfinished"
    except ValueError:
        got = "malformed"
    assert got == outcome
