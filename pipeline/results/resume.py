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
from dataclasses import dataclass
from pathlib import Path

from evals.json_text import strict_dumps
from evals.sample_line import SampleJson
from pipeline.results.accept_block import Traffic
from pipeline.results.cell_paths import HASH_FILE, SAMPLES_DIR, samples_dir
from pipeline.results.result_types import CellResult, Resumed
from pipeline.results.store import read_result, write_result


@dataclass(frozen=True)
class ResumePolicies:
    """The ``server.on_*`` policies (``fail`` | ``warn``) a finished cell is judged again under.

    Not part of the config hash, so a rerun may tighten them; the defaults are ``ServerConf``'s.
    """

    on_unverified: str = "warn"
    on_foreign_traffic: str = "warn"


def finished_result(
    cell_dir: Path, config_hash: str, policies: ResumePolicies | None = None
) -> CellResult | None:
    """The cell's previous result when it is ``ok`` for the same config hash and the policies.

    The ``server.on_*`` policies are not part of the hash, so a finished cell is judged again
    under the rerun's: a cell measured on a server that ran something else is never finished
    (a rerun, after the server was fixed, measures it again), nor one that a policy set to
    ``fail`` now would have failed (``policy_breaches``).
    """
    previous = _ok_result(cell_dir, config_hash)
    if previous is None or previous.misconfigured():
        return None
    return None if policy_breaches(previous, policies or ResumePolicies()) else previous


def _ok_result(cell_dir: Path, config_hash: str) -> CellResult | None:
    try:
        previous = read_result(cell_dir)
    except ValueError:  # a damaged result.json is rerun, never trusted
        return None
    if not previous or previous.status != "ok" or previous.config_hash != config_hash:
        return None
    return previous


def policy_breaches(result: CellResult, policies: ResumePolicies) -> dict[str, str]:
    """Each ``server.on_*`` policy set to ``fail`` that the finished ``result`` breaks, and how.

    ``on_mismatch`` needs no entry: a misconfigured result is never finished.
    """
    found = {}
    if policies.on_unverified == "fail" and result.unverified:
        found["on_unverified"] = "settings the server does not report: " + "; ".join(
            result.unverified_lines()
        )
    crowded = [n for n, ev in result.evals.items() if ev.accept and _foreign(ev.accept.traffic)]
    if policies.on_foreign_traffic == "fail" and crowded:
        found["on_foreign_traffic"] = "another client's requests in eval " + ", ".join(crowded)
    return found


def _foreign(traffic: Traffic | None) -> bool:
    return traffic is not None and traffic.foreign > 0


def set_aside_for_policies(
    cell_dir: Path, config_hash: str, policies: ResumePolicies
) -> str | None:
    """Move aside the samples of a finished cell that a stricter policy sends back, and say so.

    Samples whose server-level figures were shared with another client (``on_foreign_traffic``)
    are measured again, in a window of their own; they are moved to
    ``samples.previous-<hash>-foreign-traffic/``, never deleted. Returns the note, or None.
    """
    previous = _ok_result(cell_dir, config_hash)
    breaches = {} if previous is None else policy_breaches(previous, policies)
    if "on_foreign_traffic" not in breaches or not samples_dir(cell_dir).exists():
        return None
    moved = _free_name(cell_dir / f"samples.previous-{config_hash}-foreign-traffic")
    shutil.move(str(samples_dir(cell_dir)), str(moved))
    return (
        f"measured again under server.on_foreign_traffic=fail: the finished result had "
        f"{breaches['on_foreign_traffic']}; its samples were moved to {moved.name}/"
    )


def samples_key(result: CellResult) -> str:
    """What the samples are measured under: the config hash, and what the server ran instead."""
    wrong = result.misconfigured()
    measured = str(result.config_hash)
    if not wrong:
        return measured
    digest = hashlib.sha256("\n".join(wrong).encode()).hexdigest()[:8]
    return f"{measured}-misconfigured-{digest}"


def claim_samples(cell_dir: Path, config_hash: str, notes: list[str] | None = None) -> Path:
    """Make ``samples/`` belong to ``config_hash``, moving other measurements aside.

    ``notes``: gets one line saying exactly what moved where, when something did.
    """
    samples = samples_dir(cell_dir)
    marker = samples / HASH_FILE
    if samples.exists():
        old = marker.read_text().strip() if marker.exists() else "unknown"
        if old != config_hash:
            lines = sum(len(p.read_text().splitlines()) for p in samples.glob("*.jsonl"))
            moved = _free_name(cell_dir / f"samples.previous-{old}")
            shutil.move(str(samples), str(moved))
            if notes is not None:
                notes.append(
                    f"samples/ held another measurement ({old}, {lines} sample lines): moved "
                    f"to {moved}/, and this cell measured again"
                )
    samples.mkdir(parents=True, exist_ok=True)
    marker.write_text(config_hash + "\n")
    return samples


def kept_samples(path: Path, need_spec: bool = False) -> list[SampleJson]:
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


def answered_samples(path: Path, need_spec: bool = False) -> list[SampleJson]:
    """The answered samples in ``path`` (the last line per prompt wins); the file is not touched."""
    if not path.exists():
        return []
    latest: dict[tuple[str, int], SampleJson] = {}
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


def _rewrite_jsonl(path: Path, records: list[SampleJson]) -> None:
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(strict_dumps(record) + "\n")
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


def resuming_line(eval_name: str, kept: int, left: int) -> str:
    """What a rerun says before an eval it resumes: the samples kept, the prompts left to ask."""
    return (
        f"{eval_name}: resuming: {kept} answered samples kept from "
        f"{SAMPLES_DIR}/{eval_name}.jsonl, {left} of {kept + left} left to ask"
    )


def resumed_line(eval_name: str, kept: int, total: int) -> str:
    """What a resumed cell's summary says of one eval: kept from the earlier run, asked now."""
    asked = total - kept
    return f"resumed: {eval_name} kept {kept} answered samples of an earlier run, asked {asked}"


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        candidate, n = path.with_name(f"{path.name}.{n}"), n + 1
    return candidate


def mark_skipped(cell_dir: Path, previous: CellResult, when: str) -> CellResult:
    """Record on the result that a rerun found the cell done and skipped it."""
    return write_result(cell_dir, previous.with_resumed(Resumed(when, "skipped: already ok")))
