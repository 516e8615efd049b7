"""The pool of servers started ahead: taken only by the very same command, else stopped."""

from __future__ import annotations

import os
import sys

import pytest

from pipeline.serving import prestart_pool

pytestmark = pytest.mark.integration

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]
ENV = dict(os.environ)


def test_only_the_same_argv_and_env_take_it_and_the_rest_is_stopped(tmp_path):
    prestart_pool.start(tmp_path / "a", SLEEP, ENV, 4321, grace_s=1)
    first = prestart_pool._POOL[0].process
    assert prestart_pool.reserved_port(tmp_path / "a") == 4321
    assert prestart_pool.reserved_port(tmp_path / "b") is None
    assert prestart_pool.take(tmp_path / "a", [*SLEEP, "--other"], ENV) is None
    assert first.poll() is not None  # another command: stopped, never reused
    prestart_pool.start(tmp_path / "a", SLEEP, ENV, 4321, grace_s=1)
    assert prestart_pool.take(tmp_path / "a", SLEEP, {**ENV, "X": "1"}) is None  # other env
    prestart_pool.start(tmp_path / "a", SLEEP, ENV, 4321, grace_s=1)
    taken = prestart_pool.take(tmp_path / "a", SLEEP, ENV)
    assert taken is not None and taken.process.poll() is None and prestart_pool._POOL == []
    taken.process.kill()
    taken.process.wait()


def test_a_cell_keeps_its_own_and_stops_the_others(tmp_path):
    prestart_pool.start(tmp_path / "a", SLEEP, ENV, 1, grace_s=1)
    a = prestart_pool._POOL[0].process
    prestart_pool.discard(keep=tmp_path / "a")  # cell a starts: its own stays
    assert a.poll() is None
    prestart_pool.discard(only=tmp_path / "b")  # cell b ends: a's is not b's
    assert a.poll() is None
    prestart_pool.start(tmp_path / "b", SLEEP, ENV, 2, grace_s=1)  # one at most: a's stops
    assert a.poll() is not None
    b = prestart_pool._POOL[0].process
    prestart_pool.discard(only=tmp_path / "b")
    assert b.poll() is not None and prestart_pool._POOL == []
