"""Loader of the mtp_arith_sample task: the JSONL beside this file, offline, whatever the cwd."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("mtp_arith_sample.jsonl")


def load(**_: Any) -> Any:
    """The task's splits as a ``datasets.DatasetDict`` (lm-eval passes metadata kwargs; unused)."""
    import datasets

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
