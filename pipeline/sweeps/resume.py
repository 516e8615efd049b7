"""Resume: skip a cell that is already done, and keep a cell's finished samples across reruns.

A cell folder remembers the config hash its samples were measured under (``samples/CONFIG_HASH``),
with what the server ran instead where it differed from the cell (``server.on_mismatch=warn``),
so that samples of a misconfigured server never mix with those of a correct one. On a rerun with
the same hash, answered samples are kept and only the missing or errored
(question, repeat) pairs are sent again; with another hash the old samples are moved aside to
``samples.previous-<hash>/`` (never deleted) and the cell starts over.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from pipeline.results.cell_paths import HASH_FILE, samples_dir
from pipeline.results.result_types import CellResult, Resumed
from pipeline.results.store import read_result, write_result


def finished_result(
    cell_dir: Path, config_hash: str, strict_unverified: bool = False
) -> CellResult | None:
    """The cell's previous result when it is ``ok`` for the same config hash.

    A cell measured on a server that ran something else is not finished: a rerun (after the
    server was fixed) measures it again; nor is one with unverified settings when the rerun asks
    for them to fail (``strict_unverified``: ``server.on_unverified=fail``).
    """
    try:
        previous = read_result(cell_dir)
    except ValueError:  # a damaged result.json is rerun, never trusted
        return None
    if not previous or previous.status != "ok" or previous.config_hash != config_hash:
        return None
    stale = previous.misconfigured() or (strict_unverified and previous.unverified)
    return None if stale else previous


def samples_key(result: CellResult) -> str:
    """What the samples are measured under: the config hash, and what the server ran instead."""
    wrong = result.misconfigured()
    measured = str(result.config_hash)
    if not wrong:
        return measured
    digest = hashlib.sha256("\n".join(wrong).encode()).hexdigest()[:8]
    return f"{measured}-misconfigured-{digest}"


def claim_samples(cell_dir: Path, config_hash: str) -> Path:
    """Make ``samples/`` belong to ``config_hash``, moving other measurements aside."""
    samples = samples_dir(cell_dir)
    marker = samples / HASH_FILE
    if samples.exists():
        old = marker.read_text().strip() if marker.exists() else "unknown"
        if old != config_hash:
            shutil.move(str(samples), str(_free_name(cell_dir / f"samples.previous-{old}")))
    samples.mkdir(parents=True, exist_ok=True)
    marker.write_text(config_hash + "\n")
    return samples


def kept_samples(path: Path, need_spec: bool = False) -> list[dict[str, Any]]:
    """Answered samples of an earlier run of the same cell (the last line per prompt wins).

    Errored samples are dropped so they are asked again, and so are, when ``need_spec``, samples
    without speculative statistics (a speculative cell needs them); a torn last line (the process
    was killed while writing) is ignored. The file is rewritten atomically with the kept lines.
    """
    if not path.exists():
        return []
    kept = answered_samples(path, need_spec)
    _rewrite_jsonl(path, kept)
    return kept


def answered_samples(path: Path, need_spec: bool = False) -> list[dict[str, Any]]:
    """The answered samples in ``path`` (the last line per prompt wins); the file is not touched."""
    if not path.exists():
        return []
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        latest[(record["question_id"], record["repeat"])] = record
    return [
        r
        for r in latest.values()
        if r.get("error_kind") is None and (r.get("spec") or not need_spec)
    ]


def _rewrite_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def kept_note(cell_dir: Path) -> str:
    """What an interrupted cell leaves for its rerun, in words (answered samples on disk)."""
    answered = 0
    for path in samples_dir(cell_dir).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                answered += json.loads(line).get("error_kind") is None
            except ValueError:  # a line torn by the interrupt
                continue
    return f"{answered} answered samples kept in samples/; a rerun asks only for the rest"


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        candidate, n = path.with_name(f"{path.name}.{n}"), n + 1
    return candidate


def mark_skipped(cell_dir: Path, previous: CellResult, when: str) -> CellResult:
    """Record on the result that a rerun found the cell done and skipped it."""
    return write_result(cell_dir, previous.with_resumed(Resumed(when, "skipped: already ok")))
