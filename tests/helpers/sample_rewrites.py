"""A finished sweep copied elsewhere, its samples rewritten, and reported again.

For the questions view: samples as older releases wrote them (no ``question`` key), and samples
whose question and replies carry markup, as a hostile dataset or model could write them. The
copy lives in a new folder, so every such report also reads a sweep that was moved.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers.cells import REPO, console_script

Rewrite = Callable[[dict[str, Any]], dict[str, Any]]

# Markup a page must show as text: a script, a closed table cell and pre, an unclosed comment.
INJECTED = '</pre></td></table><script>window.injected = 1; alert("x")</script><!--'


def without_question(record: dict[str, Any]) -> dict[str, Any]:
    """A sample line as written before the runner recorded the question."""
    record.pop("question", None)
    return record


def with_markup(record: dict[str, Any]) -> dict[str, Any]:
    """A sample line whose question text, first option and reply carry ``INJECTED``."""
    if record.get("response") is not None:
        record["response"] = f"{INJECTED}\n{record['response']}"
    question = record.get("question")
    if isinstance(question, dict):
        question["text"] = f"{INJECTED} {question['text']}"
        question["options"][1] = f"<b>{question['options'][1]}</b>"
    return record


def rewritten_report(sweep: Path, into: Path, rewrite: Rewrite) -> Path:
    """Copy ``sweep`` to ``into``, rewrite every sample line, run ``mtp-eval-report`` on it.

    Returns:
        The copy's report folder (``into/report``).
    """
    shutil.copytree(sweep, into, ignore=shutil.ignore_patterns("report"))
    for path in into.glob("*/samples/*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(json.dumps(rewrite(r)) + "\n" for r in lines))
    out = into / "report"
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(into), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode in (0, 1, 2) and (out / "report.html").is_file(), run.stderr[-2000:]
    return out
