"""park_results: the committed results leave what a device call carries and come back intact."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.live_h200 import park_results as pr

LIVE = Path(pr.LIVE)
FILES = {
    LIVE / "signoff/checks/skip_fraction.json": "{}",
    LIVE / "longctx-model-worked-0.5.23/tokenizer/tokenizer.json": "{}",
    LIVE / "trained-model/recipe.json": "{}",
    LIVE / "trained-model/target/model.safetensors": "w" * 4096,
    LIVE / "trained-model/target/tokenizer.json": "{}",
    LIVE / "trained-model/draft/model.safetensors": "d" * 1024,
    LIVE / "serving-0.5.23/cells.tar.xz": "x" * 8192,
}


def _repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-q", "-m", "r"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    return tmp_path


def _status(repo: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


@pytest.mark.parametrize(
    ("weights", "present", "absent"),
    [
        (False, ["trained-model/target/tokenizer.json", "signoff/checks/skip_fraction.json",
                 "longctx-model-worked-0.5.23/tokenizer/tokenizer.json"],
         ["trained-model/target/model.safetensors", "trained-model/draft/model.safetensors",
          "serving-0.5.23/cells.tar.xz"]),
        (True, ["trained-model/target/model.safetensors", "trained-model/draft/model.safetensors"],
         ["serving-0.5.23/cells.tar.xz"]),
    ],
)  # fmt: skip
def test_park_keeps_what_the_device_reads(
    tmp_path: Path, weights: bool, present: list[str], absent: list[str]
) -> None:
    repo = _repo(tmp_path)
    line = pr.park(repo, weights)
    assert "tracked tree now" in line
    for rel in present:
        assert (repo / LIVE / rel).is_file(), rel
    for rel in absent:
        assert not (repo / LIVE / rel).exists(), rel
    assert (repo / pr.PARKED / "live-h200/serving-0.5.23/cells.tar.xz").is_file()
    assert pr.restore(repo) == f"restored {pr.RESULTS}"
    assert _status(repo) == ""
    assert not (repo / pr.PARKED).exists()


def test_park_twice_and_restore_nothing_are_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with pytest.raises(SystemExit, match="nothing parked"):
        pr.restore(repo)
    pr.park(repo, False)
    with pytest.raises(SystemExit, match="run `restore` first"):
        pr.park(repo, False)
    pr.restore(repo)


def test_uncommitted_results_are_not_parked(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / LIVE / "serving-0.5.23/new.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"(?s)uncommitted changes.*new\.json"):
        pr.park(repo, False)
    assert (repo / LIVE / "serving-0.5.23/new.json").is_file()


def test_results_written_while_parked_stop_the_restore_and_stay(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    pr.park(repo, False)
    lease = repo / LIVE / "serving-trained/report.md"  # a lease's result, copied in too early
    lease.parent.mkdir(parents=True)
    lease.write_text("measured")
    kept = repo / LIVE / "trained-model/recipe.json"  # a kept copy, edited
    kept.write_text('{"edited": 1}')
    with pytest.raises(SystemExit, match=r"(?s)not in the parked copy.*report\.md.*recipe\.json"):
        pr.restore(repo)
    assert lease.read_text() == "measured" and (repo / pr.PARKED).is_dir()
