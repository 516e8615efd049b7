"""The shelf of committed live runs: ``benchmarks/results/live-h200/index.json``, typed.

    python benchmarks/live_h200/live_index.py           # print INDEX.md
    python benchmarks/live_h200/live_index.py --write   # write it beside index.json

One row per run folder (date, SGLang release, kernel builds, GPU, plan, what it shows, current or
superseded) and, per run, the reports a test rebuilds from the committed cells: where their cells
and samples are, the options after the inputs and the exit code. ``rebuild_report.py`` and
``tests/integration/test_live_runs.py`` read the reports from here, so a new run is one row.
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "benchmarks/results/live-h200"
INDEX = LIVE / "index.json"
COLUMNS = ("date", "SGLang", "kernel builds", "GPU", "plan", "what it shows", "folder", "status")


@dataclass(frozen=True)
class Source:
    """A run's committed cells and samples, laid out under ``under`` (empty: at the top)."""

    folder: str
    under: str
    samples: str


@dataclass(frozen=True)
class Report:
    """A committed report of a run and how it is made again from committed cells."""

    run: str
    name: str
    exit_code: int
    rebuild: bool
    sources: tuple[Source, ...]
    options: tuple[str, ...]
    # Files of the run folder an option names at the path the device gave (e.g. the skipped
    # shares a report read as outputs/live/lf-skip.json): (path in the scratch folder, file).
    placed: tuple[tuple[str, str], ...] = ()

    @property
    def path(self) -> Path:
        """The committed report folder."""
        return LIVE / self.run / self.name

    @property
    def label(self) -> str:
        """``run/report``, the test's id."""
        return f"{self.run}/{self.name}"


@dataclass(frozen=True)
class Run:
    """One row of the index."""

    folder: str
    date: str
    sglang: str
    kernels: str
    gpu: str
    plan: str
    shows: str
    status: str
    reports: tuple[Report, ...]


def _source(text: str, samples: str) -> Source:
    folder, _, under = text.partition(":")
    return Source(folder, under, samples)


def _report(run: str, raw: dict[str, Any]) -> Report:
    samples = str(raw.get("samples", "samples.tar.xz"))
    sources = tuple(_source(str(s), samples) for s in raw["sources"])
    options = tuple(str(o).replace("{repo}", str(REPO)) for o in raw["options"])
    name, code, rebuild = str(raw["report"]), int(raw["exit_code"]), bool(raw["rebuild"])
    placed = tuple((str(at), str(file)) for at, file in raw.get("place", {}).items())
    return Report(run, name, code, rebuild, sources, options, placed)


def _run(raw: dict[str, Any]) -> Run:
    missing = {"folder", "date", "sglang", "kernels", "gpu", "plan", "shows", "status", "reports"}
    missing -= set(raw)
    if missing:
        raise ValueError(f"{INDEX}: a run lacks {sorted(missing)}: {raw.get('folder')}")
    folder = str(raw["folder"])
    reports = tuple(_report(folder, r) for r in raw["reports"])
    keys = ("date", "sglang", "kernels", "gpu", "plan", "shows", "status")
    date, sglang, kernels, gpu, plan, shows, status = (str(raw[k]) for k in keys)
    return Run(folder, date, sglang, kernels, gpu, plan, shows, status, reports)


def load(path: Path = INDEX) -> list[Run]:
    """Every run of the index, in its order (by date)."""
    return [_run(r) for r in json.loads(path.read_text())["runs"]]


def reports(path: Path = INDEX) -> list[Report]:
    """Every committed report the index lists."""
    return [rep for run in load(path) for rep in run.reports]


def markdown(path: Path = INDEX) -> str:
    """INDEX.md: the naming scheme, a row per run, the files made from several runs."""
    raw = json.loads(path.read_text())
    lines = ["# Live runs on the H200", "", raw["about"], "", f"Folder names: {raw['naming']}", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]  # fmt: skip
    for run in load(path):
        cells = (run.date, run.sglang, run.kernels, run.gpu, run.plan, run.shows,
                 f"[`{run.folder}/`]({run.folder}/README.md)", run.status)  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Made from the runs above:", "", "| file | from | made by |", "|---|---|---|"]
    lines += [f"| `{d['file']}` | {d['from']} | `{d['made_by']}` |" for d in raw["derived"]]
    return "\n".join(lines) + "\n"


def _unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python before 3.10.12 / 3.11.4: the project's own archive
            tar.extractall(into)


def lay_out(report: Report, work: Path) -> list[str]:
    """The report's inputs under ``work`` as the committed report read them, in its order.

    Each source's ``cells/`` (where it has one: a run may keep its cells whole in the samples
    archive) and samples are copied under ``work/.unpacked/<under>``; each input
    the committed ``summary.json`` names is then moved from the longest tail of its path found
    there (``outputs/live/base-auto`` from ``base-auto``, ``0.5.19/sp-fa3`` as it is).
    """
    unpacked = work / ".unpacked"
    for source in report.sources:
        into = unpacked / source.under
        if (LIVE / source.folder / "cells").is_dir():
            shutil.copytree(LIVE / source.folder / "cells", into, dirs_exist_ok=True)
        _unpack(LIVE / source.folder / source.samples, into)
    inputs = [str(p) for p in json.loads((report.path / "summary.json").read_text())["inputs"]]
    for given in inputs:
        parts = Path(given).parts
        tails = [unpacked.joinpath(*parts[i:]) for i in range(len(parts))]
        found = next((t for t in tails if t.is_dir()), None)
        if found is None:
            raise FileNotFoundError(f"{report.label}: no sweep {given!r} in {report.sources}")
        (work / given).parent.mkdir(parents=True, exist_ok=True)
        found.rename(work / given)
    for at, file in report.placed:
        (work / at).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(LIVE / report.run / file, work / at)
    return inputs


def main(argv: list[str]) -> int:
    """Print INDEX.md, or write it with ``--write``."""
    text = markdown()
    if "--write" in argv:
        (LIVE / "INDEX.md").write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
