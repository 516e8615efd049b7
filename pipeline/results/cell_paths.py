"""Where a cell's files are, and how a cell is named: the one place that spells them.

A cell folder holds ``result.json`` (``pipeline.results.result_types``), ``samples/<eval>.jsonl``
(one line per request), ``samples/CONFIG_HASH`` (what the samples were measured under) and
``server.log`` (when the pipeline started the server), ``parity/`` (with ``parity.enabled``:
``pipeline.measuring.parity_run``); a multi-node cell's other nodes each write
theirs into ``node-<rank>/``.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.results.skip_factor import factor_text

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


def parity_dir(cell_dir: Path) -> Path:
    """The cell's ``parity/`` folder: ``sequences.jsonl``, ``scores.jsonl``, ``summary.json``."""
    return cell_dir / "parity"


def server_log_path(cell_dir: Path) -> Path:
    """The server's log, when the pipeline started the server."""
    return cell_dir / SERVER_LOG


def node_dir(cell_dir: Path, rank: int) -> Path:
    """A non-zero node's own folder of a multi-node cell (its result.json and server.log)."""
    return cell_dir / f"node-{rank}"


def cell_name(
    model: str, variant: str, kv_dtype: str, skip_prefill: float | None, skip_decode: float | None
) -> str:
    """Human-readable identity of a cell: ``model/variant/kv dtype/sp=PREFILL/sd=DECODE``."""
    prefill, decode = factor_text(skip_prefill), factor_text(skip_decode)
    return f"{model}/{variant}/{kv_dtype}/sp={prefill}/sd={decode}"


def job_order(cell_dir: Path) -> tuple[int, str]:
    """Sort key of a sweep's cell folders: Hydra's job number (its name's prefix), then name."""
    head = cell_dir.name.split("_", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, cell_dir.name)
