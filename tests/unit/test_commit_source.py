"""Where a cell's mtp-eval commit comes from: git, else ``MTP_EVAL_COMMIT``, with its source.

Real ``git`` in temporary folders: a checkout with a commit, and a plain copy without ``.git``
(what the GPU machine gets).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pipeline.cell.provenance import COMMIT_ENV, commit_problem, git_state
from pipeline.results.result_blocks import Provenance

SHA = "a85cf88e1234567890abcdef1234567890abcdef"


@pytest.mark.parametrize(
    ("value", "bad"),
    [(None, False), (SHA, False), ("a85cf88", False), ("A85CF88", False), ("a85cf8", True),
     ("", True), ("HEAD", True), ("$(git rev-parse HEAD)", True), (SHA + "0", True),
     ("a85cf88 ", True)],
)  # fmt: skip
def test_only_a_commit_id_is_taken(value: str | None, bad: bool) -> None:
    env = {} if value is None else {COMMIT_ENV: value}
    problem = commit_problem(env)
    assert (problem is not None) is bad
    if problem:
        assert COMMIT_ENV in problem and "git rev-parse HEAD" in problem


def test_a_copy_without_git_takes_the_commit_from_the_environment(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    assert git_state(copy, {COMMIT_ENV: SHA.upper()}) == {
        "sha": SHA, "dirty": None, "source": COMMIT_ENV}  # fmt: skip
    assert git_state(copy, {}) == {"sha": None, "dirty": None}  # the layout before the variable
    assert git_state(copy, {COMMIT_ENV: "HEAD"})["sha"] is None  # refused at start (exit 2)


def test_git_wins_over_the_environment_where_it_can_say(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()  # fmt: skip

    git("init", "-q")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    state = git_state(tmp_path, {COMMIT_ENV: SHA})
    assert state == {"sha": git("rev-parse", "HEAD"), "dirty": False}  # as before: no source
    (tmp_path / "f").write_text("y")
    assert git_state(tmp_path, {})["dirty"] is True


@pytest.mark.parametrize(
    ("block", "source"),
    [({"sha": SHA, "dirty": False}, "git"),  # git's: no source written
     ({"sha": None, "dirty": None}, None),
     ({"sha": SHA, "dirty": None, "source": COMMIT_ENV}, COMMIT_ENV), ({}, None)],
)  # fmt: skip
def test_the_source_is_read_from_old_and_new_results(block: dict, source: str | None) -> None:
    assert Provenance.from_json({"mtp_eval_git": block}).git_source == source
