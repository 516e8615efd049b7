"""``lease_ready.staging_calls``: the carry list of each staging call, packed in order."""

from __future__ import annotations

import pytest

from benchmarks.live_h200.lease_ready import CARRY_PATHS, staging_calls

MIB = 2**20
CASES = [
    # firsts, chunk sizes (MiB), room (MiB), expected calls (chunk indexes; "m" the firsts)
    ("one chunk a call when two do not fit", ["m"], [16, 16, 16], 20, [["m", 0], [1], [2]]),
    ("two a call when they fit", ["m"], [16, 16, 16, 4], 34, [["m", 0, 1], [2, 3]]),
    ("a small last chunk joins the call before", ["m"], [16, 4], 20, [["m", 0, 1]]),
    ("no firsts: the chunks alone", [], [10, 10], 15, [[0], [1]]),
    (
        "a chunk larger than the room still travels (lease_ready refuses the bundle)",
        ["m"],
        [30, 5],
        20,
        [["m", 0], [1]],
    ),
]


@pytest.mark.parametrize(("why", "firsts", "sizes", "room", "expected"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_staging_calls_pack_chunks_in_order(why, firsts, sizes, room, expected):
    chunks = [(f"c{i}", size * MIB) for i, size in enumerate(sizes)]
    calls = staging_calls(firsts, chunks, room * MIB)
    named = [[x if isinstance(x, str) else f"c{x}" for x in call] for call in expected]
    assert calls == named, why


def test_no_call_carries_more_paths_than_a_device_call_takes():
    calls = staging_calls(["a", "b", "c"], [(f"c{i}", 1) for i in range(20)], 10**9)
    assert [len(c) for c in calls] == [CARRY_PATHS, CARRY_PATHS, 7]
    assert [n for c in calls for n in c] == ["a", "b", "c", *(f"c{i}" for i in range(20))]


def test_what_every_call_carries_opens_each_call_and_takes_its_paths():
    calls = staging_calls(["m"], [(f"c{i}", 1) for i in range(10)], 10**9, every=["code"])
    assert all(c[0] == "code" for c in calls)
    assert [len(c) for c in calls] == [CARRY_PATHS, 5]  # code, m, c0-c5; then code, c6-c9
