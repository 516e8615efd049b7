"""A 4-cell sweep killed in its third cell and run again finishes with a report
identical to an uninterrupted run's; the first two cells are not rerun, the third resumes.

The third cell (fa3, auto KV) answers each request 0.15 s late (a simulated cell-level effect),
so it still runs seconds after its tenth sample, when the kill comes: at the others' pace the
cell could end before a loaded machine delivered the signal, and its result said ok."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, processes_mentioning, result_of

pytestmark = pytest.mark.slow
SWEEP = [
    "-m",
    "backend=fmha_v2,fa3",
    "kv_dtype=auto,fp8_e4m3",
    "client.progress=false",
    "client.concurrency=4",
    "server.simulated.startup_delay_s=0.1",
    "server.simulated.latency_s=0.02",
    "server.simulated.effects=[{match:{attention_backend:fa3,kv_cache_dtype:auto},latency_s:0.15}]",
]


def sweep(sweep_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", *SWEEP, f"hydra.sweep.dir={sweep_dir}"],
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def report(sweep_dir: Path) -> list[dict]:
    subprocess.run(
        [sys.executable, "-m", "pipeline.report.cli", str(sweep_dir)],
        cwd=REPO,
        capture_output=True,
        timeout=120,
        check=False,
    )
    text = (sweep_dir / "report" / "summary.json").read_text().replace(str(sweep_dir), "<SWEEP>")
    cells = json.loads(text)["cells"]
    for cell in cells:  # when differs between the two sweeps; what was measured must not
        for key in ("started_at", "ended_at", "timing"):
            cell.pop(key, None)
    return sorted(cells, key=lambda c: json.dumps(c, sort_keys=True))


def third_cell_samples(sweep_dir: Path) -> int:
    found = list(sweep_dir.glob("2_*/samples/mcq_sample.jsonl"))
    return len(found[0].read_text().splitlines()) if found else 0


def test_killed_sweep_resumes_to_the_same_report(tmp_path):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    proc = sweep(killed)
    deadline = time.monotonic() + 120
    while third_cell_samples(killed) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert processes_mentioning(str(killed)) == []
    third = next(killed.glob("2_*"))
    assert "_fa3_auto_" in third.name  # the cell the slow effect matches
    error = result_of(third).error
    assert error is not None and error.kind == "interrupted"
    saved = third_cell_samples(killed)

    rerun = sweep(killed)
    out, _ = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, out[-3000:]
    results = {p.parent.name[:1]: json.loads(p.read_text()) for p in killed.glob("*/result.json")}
    assert all(r["status"] == "ok" for r in results.values())
    for first_two in ("0", "1"):
        assert results[first_two]["resumed"][-1]["action"] == "skipped: already ok"
    assert results["2"]["evals"]["mcq_sample"]["resumed_samples"] >= min(saved, 10)

    done = sweep(clean)
    done.communicate(timeout=180)
    # The resumed cell's server counted only the requests after the restart: its accept check
    # says so (the window); everything else reads as the uninterrupted sweep's report.
    resumed = results["2"]["evals"]["mcq_sample"]
    total = resumed["n_samples"]
    text = json.dumps(report(killed))
    said = rf" \(server-side figures: the resumed window, (\d+) of {total} requests\)"
    windows = re.findall(said, text)
    assert windows == [str(total - resumed["resumed_samples"])], windows
    window = f" (server-side figures: the resumed window, {windows[0]} of {total} requests)"
    assert json.loads(text.replace(window, "")) == report(clean)

    # A finished sweep run again starts no server: every cell is skipped as already ok (a
    # behaviour, not a timing: the 2-core CI machine's load decides seconds).
    again = sweep(killed)
    again.communicate(timeout=120)
    assert again.returncode == 0
    for path in killed.glob("*/result.json"):
        assert json.loads(path.read_text())["resumed"][-1]["action"] == "skipped: already ok"
