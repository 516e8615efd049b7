"""An lm-eval task folder holding literal rows: how a test gives the harness eval its documents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from evals.eval_conf import DatasetConf
from evals.lm_eval_bridge import TASKS_DIR


def literal_task(tmp_path: Path, rows: list[dict[str, Any]]) -> DatasetConf:
    """A copy of the bundled ``mtp_arith_sample`` task named ``tiny_task``, over ``rows``."""
    folder = tmp_path / "tiny_task"
    shutil.copytree(TASKS_DIR / "mtp_arith_sample", folder)
    (folder / "mtp_arith_sample.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    yaml_text = (folder / "mtp_arith_sample.yaml").read_text(encoding="utf-8")
    (folder / "mtp_arith_sample.yaml").unlink()
    (folder / "tiny_task.yaml").write_text(
        yaml_text.replace("task: mtp_arith_sample", "task: tiny_task"), encoding="utf-8"
    )
    return DatasetConf(source="lm_eval", path="tiny_task", subset=str(folder))
