"""What the user's guides state about the files the report writes, checked against the code: a
new user found README.md and outputs/README.md still at summary.json schema 5 after 6 landed,
and serving.csv written but named nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.report.write.summary_json import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
GUIDES = ("README.md", "outputs/README.md")


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guides_state_the_summary_schema_version_the_code_writes(guide: str) -> None:
    text = (REPO / guide).read_text(encoding="utf-8")
    stated = {int(v) for v in re.findall(r"schema_version`? (\d+)", text)}
    # outputs/README.md also names result.json's own schema (1): the report's is the largest.
    assert stated and max(stated) == SCHEMA_VERSION, f"{guide}: schema_version {sorted(stated)}"


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guides_name_every_file_the_report_writes(guide: str) -> None:
    cli = (REPO / "pipeline/report/cli.py").read_text(encoding="utf-8")
    written = set(re.findall(r'"(\w+\.(?:md|html|json|csv|xml))": render', cli))
    assert {"summary.json", "serving.csv", "speed.csv"} <= written  # the pattern still reads
    text = (REPO / guide).read_text(encoding="utf-8")
    assert [name for name in sorted(written) if name not in text] == []
