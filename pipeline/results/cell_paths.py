"""Where a cell's files are, and how a cell is named: the one place that spells them.

A cell folder holds ``result.json`` (``pipeline.results.result_types``), ``samples/<eval>.jsonl``
(one line per request), ``samples/CONFIG_HASH`` (what the samples were measured under) and
``server.log`` (when the pipeline started the server); a multi-node cell's other nodes each write
theirs into ``node-<rank>/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

RESULT_FILE = "result.json"
SAMPLES_DIR = "samples"
HASH_FILE = "CONFIG_HASH"
SERVER_LOG = "server.log"


def result_path(cell_dir: Path) -> Path:
    """The cell's ``result.json``."""
    return cell_dir / RESULT_FILE


def samples_dir(cell_dir: Path) -> Path:
    """The cell's ``samples/`` folder."""
    return cell_dir / SAMPLES_DIR


def samples_path(cell_dir: Path, eval_name: str) -> Path:
    """One eval's sample lines, ``samples/<eval>.jsonl``."""
    return samples_dir(cell_dir) / f"{eval_name}.jsonl"


def server_log_path(cell_dir: Path) -> Path:
    """The server's log, when the pipeline started the server."""
    return cell_dir / SERVER_LOG


def node_dir(cell_dir: Path, rank: int) -> Path:
    """A non-zero node's own folder of a multi-node cell (its result.json and server.log)."""
    return cell_dir / f"node-{rank}"


def cell_name(model: Any, variant: Any, kv_dtype: Any, skip_prefill: Any, skip_decode: Any) -> str:
    """Human-readable identity of a cell: ``model/variant/kv dtype/sp=PREFILL/sd=DECODE``."""
    return f"{model}/{variant}/{kv_dtype}/sp={skip_prefill}/sd={skip_decode}"


def job_order(cell_dir: Path) -> tuple[int, str]:
    """Sort key of a sweep's cell folders: Hydra's job number (its name's prefix), then name."""
    head = cell_dir.name.split("_", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, cell_dir.name)
