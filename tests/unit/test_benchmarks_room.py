"""``benchmarks`` is one package: its README names every script, and nothing puts a folder of it
on ``sys.path`` (the scripts run as ``python -m benchmarks.NAME``; tests import them normally)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
# Copied into SGLang's site-packages on the GPU host, never run: not scripts of this room.
STAND_INS = ("sm90_standins", "xgrammar_standin", "bench_standins")


def _scripts() -> list[str]:
    found = [*BENCH.rglob("*.py"), *BENCH.rglob("*.sh")]
    return sorted(
        str(p.relative_to(BENCH))
        for p in found
        if p.name != "__init__.py"
        and not p.is_relative_to(BENCH / "results")
        and not p.is_relative_to(BENCH / "signoff_sim")  # a library, named as a folder
        and not any(part in STAND_INS for part in p.parts)
    )


def test_the_readme_names_every_script():
    named = set(re.findall(r"`([\w/]+\.(?:py|sh))`", (BENCH / "README.md").read_text()))
    missing = [s for s in _scripts() if s not in named]
    assert missing == [], f"add a row to benchmarks/README.md for {missing}"


def test_every_folder_with_scripts_is_a_package():
    folders = {(BENCH / s).parent for s in _scripts() if s.endswith(".py")}
    assert sorted(str(f) for f in folders if not (f / "__init__.py").is_file()) == []


def test_no_script_or_test_edits_sys_path():
    sources = [*BENCH.rglob("*.py"), *(REPO / "tests").rglob("*.py")]
    edits = [str(p.relative_to(REPO)) for p in sources if "sys.path.insert(" in p.read_text()]
    assert edits == [str(Path(__file__).relative_to(REPO))]  # this file's own needle
