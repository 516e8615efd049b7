"""What a sequential cell running beside others says about itself as it runs (I/O).

With ``sequential.baseline_runs=beside`` every sequential cell keeps ``sequential_live.json`` in
its folder, rewritten atomically (``store.write_json_atomic``) after each of its rounds: its
``CellKey`` (so a candidate picks a running baseline by the report's own rule) and per eval its
role, its state (``running``; ``stopped`` by its look; ``done`` at ``max_repeats``), the repeats
it has finished (every prompt of repeats ``0 .. repeats - 1`` answered or errored) and, for a
candidate, the baseline folder it pairs with. Only the cell itself writes its file; the others
read it. It stays after the cell ends: the record of how its rounds met its baseline's.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, TypedDict, cast

from evals.sample_line import SampleJson
from pipeline.results.baseline_choice import CellKey
from pipeline.results.cell_paths import RESULT_FILE
from pipeline.results.store import write_json_atomic

LIVE_FILE = "sequential_live.json"
RUNNING, STOPPED, DONE = "running", "stopped", "done"


class LiveEntryJson(TypedDict, total=False):
    """One eval's entry of ``sequential_live.json``."""

    role: str  # baseline | candidate
    state: str  # running | stopped | done
    repeats: int  # repeats finished: every prompt of repeats 0 .. repeats - 1 answered or errored
    baseline_dir: str | None  # a candidate's: the baseline folder it pairs with


class LiveJson(TypedDict):
    """``sequential_live.json``: the cell's ``CellKey`` (as ``asdict``) and its evals' entries."""

    cell: dict[str, Any]  # JSON read back: CellKey(**cell) checks it
    evals: dict[str, LiveEntryJson]


def live_entry(
    role: str, state: str, repeats: int, baseline_dir: str | None = None
) -> LiveEntryJson:
    """One eval's entry: role, state, finished repeats (and a candidate's baseline folder)."""
    entry: LiveEntryJson = {"role": role, "state": state, "repeats": repeats}
    if role == "candidate":
        entry["baseline_dir"] = baseline_dir
    return entry


def read_live(folder: Path) -> LiveJson | None:
    """A cell's live record, or None when it has none (yet) or it cannot be read.

    Written atomically, so a file that does not parse is not being written: it is left out, as
    the report leaves out a cell it cannot read.
    """
    try:
        data = json.loads((folder / LIVE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("evals"), dict):
        return None
    return cast(LiveJson, data)


def write_live(cell_dir: Path, key: CellKey, eval_name: str, entry: LiveEntryJson) -> None:
    """Set one eval's entry of this cell's live record (the other evals' entries are kept)."""
    data = read_live(cell_dir)
    evals = {**(data["evals"] if data else {}), eval_name: entry}
    cell = dataclasses.asdict(dataclasses.replace(key, status=RUNNING))
    write_json_atomic(cell_dir / LIVE_FILE, {"cell": cell, "evals": evals})


def eval_entry(folder: Path, eval_name: str) -> LiveEntryJson | None:
    """The live entry of one eval of the cell in ``folder`` (None: not started, or no record)."""
    data = read_live(folder)
    entry = None if data is None else data["evals"].get(eval_name)
    return entry if isinstance(entry, dict) else None


def running_keys(sweep: Path) -> list[CellKey]:
    """The keys of the cells of ``sweep`` that run beside the others and have not finished.

    A running cell is read as ``ok``: a candidate may pair with it as it would once it ends.
    """
    out = []
    for path in sorted(sweep.glob(f"*/{LIVE_FILE}")):
        data = read_live(path.parent)
        if data is None or (path.parent / RESULT_FILE).exists():
            continue
        try:
            cell = data["cell"]  # JSON has lists where the key has tuples
            fields = {**cell, "status": "ok", "skip": tuple(cell["skip"]),
                      "evals": tuple(cell.get("evals", ()))}  # fmt: skip
            out.append(CellKey(**fields))
        except (KeyError, TypeError):
            continue
    return out


def finished(folder: Path) -> bool:
    """Whether the cell in ``folder`` has ended (its ``result.json`` exists, whatever it says)."""
    return (folder / RESULT_FILE).exists()


def answered_records(path: Path) -> list[SampleJson]:
    """The sample lines of a samples file being appended to, the line being written left out."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]  # the last piece has no newline yet (or is empty)
    return [json.loads(line) for line in lines if line]
