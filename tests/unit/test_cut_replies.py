"""A reply cut on any byte is unfinished (retried); a whole body that is wrong stays malformed.

The half-body cut of ``tests/helpers/fault_proxy.py`` lands wherever a reply's length puts it;
one landing inside a ``null`` or after a number's ``.`` was taken for a malformed body, never
retried and counted an error. Here every cut of a live SGLang reply is tried.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.replies import Unfinished, body_result

LIVE = Path(__file__).parents[1] / "data" / "live-sglang-0.5.23"


def live_body() -> dict:
    body = json.loads((LIVE / "chat_completion_return_meta_info_and_spec_details.json").read_text())
    body["choices"][0]["message"]["content"] += ' caf\u00e9 \u2013 \U0001f600 \\u00e9 "q"'
    body["choices"][0]["meta_info"]["tiny"] = -1.5e-07  # an exponent, a minus sign
    body["choices"][0]["meta_info"]["flags"] = [True, False, None]
    return body


@pytest.mark.parametrize(
    "encoded",
    [
        json.dumps(live_body()).encode(),  # Python's spacing, non-ASCII as \u escapes
        json.dumps(live_body(), separators=(",", ":"), ensure_ascii=False).encode(),  # orjson's
    ],
    ids=["ascii-escapes", "compact-utf8"],
)
def test_every_cut_of_a_live_reply_is_unfinished(encoded: bytes) -> None:
    body_result(encoded)  # whole, it parses
    wrong = []
    for end in range(1, len(encoded)):
        try:
            body_result(encoded[:end])
            wrong.append((end, "parsed"))
        except Unfinished:
            pass
        except ValueError as exc:
            wrong.append((end, f"{encoded[max(0, end - 16) : end]!r}: {exc}"))
    assert wrong == []


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": nulx}',
        b'{"a": 1.}',
        b'{"a": tx, "b": 1}',
        b'{"a": "\\uZZZZ"}',
        b'{"a": -}',
        b'{"a": 01}',
        b'{"a": "caf\xc3\x28"}',  # not UTF-8 (bad bytes inside, not a cut at the end)
    ],
)
def test_a_whole_body_that_is_wrong_is_not_taken_for_a_cut(raw: bytes) -> None:
    with pytest.raises(ValueError) as caught:
        body_result(raw)
    assert not isinstance(caught.value, Unfinished)
