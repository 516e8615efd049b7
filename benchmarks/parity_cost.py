"""What a parity verdict costs beside the accuracy design it complements (issue 39, Performance).

    python -m benchmarks.parity_cost CELLS...

CELLS: cell folders or sweep folders (every ``*/result.json`` under them). Per cell it reads, from
``result.json``, the parity phase's own timing (the ``parity`` block: ``rescore_s``, the prefill
re-score of every sequence, and ``wall_s``, the whole phase) and the accuracy phase's (each eval's
``wall_time_s``), each times the cell's GPUs (``tp``) as GPU seconds. A cell written before the
``parity`` block existed gives the phase's time from its ``timing.marks_s`` (``parity_done`` less
the phase before it), its re-score unknown: the whole phase stands in (an upper bound).

Per verdict a candidate pays one prefill per sequence (its re-score); its accuracy verdict pays
its evals under the release sign-off's design (``experiment=release_signoff``: sequential rounds
against the 2-point margin). The ratio printed is the candidates' re-scores over their evals, the
issue's target at most 10%; the sweep's whole parity phases (the baseline's generation, the A/A,
the decode path) over all its evals are printed beside it. A candidate whose parity NO-GO ended
its sign-off (``parity.gate``) ran no evals: it is listed, and left out of the ratio.

``--design DESIGN...`` (cell or sweep folders of a release sign-off run without parity, e.g. the
committed ``benchmarks/results/live-h200/signoff-0.5.23/cells``) prices each candidate's accuracy
verdict from there instead: the design cell of the same variant, KV dtype and skip-softmax factors
(unset counts as 0), its evals as that design ran them; a candidate with no such cell (or whose
variant is the design's baseline, which ran every repeat for all candidates at once) is listed
and left out of that ratio. A parity lease runs one repeat of one eval, not the design.

On the simulated server the figures are the simulator's (CPU time, no GPU): they test the
arithmetic. The live figure needs a lease on the GPU host: run the release sign-off there with
``parity.enabled=true parity.sequences_from=auto`` (``benchmarks/live_h200/README.md``) and point
this script at the committed cells.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.report.load.tolerance import load_tolerance
from pipeline.results.cell_paths import RESULT_FILE
from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result

TARGET = 0.10  # the issue's: a parity verdict at most 10% of the accuracy design's GPU time
BEFORE_PARITY = ("serving_done", "speed_done", "evals_done")  # the phases before it, last first


@dataclass(frozen=True)
class CellCost:
    """One cell's GPU seconds in its parity and accuracy phases."""

    label: str
    variant: str
    gpus: int
    rescore_s: float | None  # the verdict's own cost (None: the cell ran no parity phase)
    parity_s: float | None  # the whole parity phase
    accuracy_s: float  # every eval's wall time
    judged: bool  # it re-scored another cell's sequences (a candidate or the A/A)
    gated: bool  # a parity NO-GO skipped its evals (parity.gate)
    source: str  # "result" (the parity block) | "marks" (older cells) | "-"

    @property
    def in_ratio(self) -> bool:
        """Whether the candidate ratio counts it: judged by parity and its accuracy measured."""
        return self.judged and not self.gated and self.rescore_s is not None and self.accuracy_s > 0


def cell_folders(paths: Sequence[Path]) -> list[Path]:
    """Each path that is a cell, else the cells under it (sorted)."""
    out: list[Path] = []
    for path in paths:
        if (path / RESULT_FILE).is_file():
            out.append(path)
        else:
            out += sorted(p.parent for p in path.rglob(RESULT_FILE))
    return out


def _from_marks(result: CellResult) -> float | None:
    """The phase's seconds: from the phase before it to its end (first: from ``verified``)."""
    marks = result.marks
    if "parity_first_done" in marks and "verified" in marks:
        return float(marks["parity_first_done"]) - float(marks["verified"])
    done = marks.get("parity_done")
    before = next((marks[k] for k in BEFORE_PARITY if k in marks), None)
    return None if done is None or before is None else float(done) - float(before)


def cell_cost(folder: Path, result: CellResult) -> CellCost:
    """The cell's costs in GPU seconds (wall seconds x the server's GPUs)."""
    gpus = max(1, result.parallel[0])
    evals = sum(e.wall_time_s or 0.0 for e in result.evals.values()) * gpus
    variant = result.cell.variant or "?"
    block = result.parity
    judged = (folder / "parity" / "summary.json").is_file()
    if block is not None and block.wall_s is not None:
        rescore = block.rescore_s if block.rescore_s is not None else block.wall_s
        gated = block.gate is not None and block.gate.stopped
        return CellCost(str(folder), variant, gpus, rescore * gpus,
                        block.wall_s * gpus, evals, judged, gated, "result")  # fmt: skip
    phase = _from_marks(result)
    if phase is None:
        return CellCost(str(folder), variant, gpus, None, None, evals,
                        False, False, "-")  # fmt: skip
    return CellCost(str(folder), variant, gpus, phase * gpus, phase * gpus, evals,
                    judged, False, "marks")  # fmt: skip


@dataclass(frozen=True)
class Ratios:
    """The candidates' re-scores over their evals, and the sweep's phases over its evals."""

    verdict: float | None
    sweep: float | None
    candidates: int


def ratios(costs: Sequence[CellCost]) -> Ratios:
    """Both GPU-time ratios (None where nothing was measured)."""
    counted = [c for c in costs if c.in_ratio]
    rescore = sum(c.rescore_s or 0.0 for c in counted)
    accuracy = sum(c.accuracy_s for c in counted)
    phases = sum(c.parity_s or 0.0 for c in costs)
    evals = sum(c.accuracy_s for c in costs)
    return Ratios(rescore / accuracy if accuracy else None, phases / evals if evals else None,
                  len(counted))  # fmt: skip


def _seconds(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def table(costs: Sequence[CellCost]) -> list[str]:
    """A markdown row per cell."""
    rows = ["| cell | variant | GPUs | re-score GPU s | parity phase GPU s | accuracy GPU s | "
            "role | from |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in costs:
        role = "gated: accuracy skipped" if c.gated else ("judged" if c.judged else "source")
        rows.append(f"| {c.label} | {c.variant} | {c.gpus} | {_seconds(c.rescore_s)} | "
                    f"{_seconds(c.parity_s)} | {c.accuracy_s:.3f} | {role} | "
                    f"{c.source} |")  # fmt: skip
    return rows


def summary_lines(found: Ratios) -> list[str]:
    """The ratio lines, the target beside the verdict's."""
    if found.verdict is None:
        return ["No candidate with both a parity re-score and measured evals: no ratio."]
    meets = "meets" if found.verdict <= TARGET else "misses"
    sweep = "-" if found.sweep is None else f"{100 * found.sweep:.2f}%"
    return [
        f"GPU-time ratio per verdict (re-score / accuracy design, {found.candidates} "
        f"candidates): {100 * found.verdict:.2f}% ({meets} the {100 * TARGET:.0f}% target)",
        f"GPU-time ratio of the sweep (every parity phase / every eval): {sweep}",
    ]


DesignKey = tuple[str, str, float, float]


def design_key(result: CellResult) -> DesignKey:
    """What pairs a parity candidate with its design cell: variant, KV dtype, both skip factors."""
    cell = result.cell
    return (cell.variant or "?", cell.kv_dtype or "?", cell.skip_prefill or 0.0,
            cell.skip_decode or 0.0)  # fmt: skip


def ok_cells(paths: Sequence[Path]) -> list[tuple[Path, CellResult]]:
    """Every cell under ``paths`` that ended ok, with its result."""
    found = ((folder, read_result(folder)) for folder in cell_folders(paths))
    return [(f, r) for f, r in found if r is not None and r.status == "ok"]


def design_lines(cells: Sequence[tuple[Path, CellResult]],
                 design: Sequence[tuple[Path, CellResult]]) -> list[str]:  # fmt: skip
    """Each judged candidate's re-score against its design cell's evals, and the ratio."""
    # The design's baselines ran every repeat for all candidates at once: not one verdict's cost.
    base = load_tolerance("default").baseline
    priced = {design_key(r): cell_cost(f, r).accuracy_s for f, r in design
              if r.cell.variant != base}  # fmt: skip
    rows = ["| candidate | re-score GPU s | design accuracy GPU s | ratio |", "|---|---|---|---|"]
    rescore = accuracy = 0.0
    for folder, result in cells:
        cost = cell_cost(folder, result)
        if not cost.judged or cost.rescore_s is None:
            continue
        paid = priced.get(design_key(result))
        share = "no design cell" if not paid else f"{100 * cost.rescore_s / paid:.2f}%"
        rows.append(f"| {folder.parent.name}/{folder.name} | {cost.rescore_s:.3f} | "
                    f"{'-' if paid is None else f'{paid:.3f}'} | {share} |")  # fmt: skip
        if paid:
            rescore, accuracy = rescore + cost.rescore_s, accuracy + paid
    if not accuracy:
        return [*rows, "", "No candidate has a design cell: no design ratio."]
    share, target = 100 * rescore / accuracy, 100 * TARGET
    meets = "meets" if share <= target else "misses"
    return [*rows, "", f"GPU-time ratio per verdict against the release design: {share:.2f}% "
            f"({meets} the {target:.0f}% target)"]  # fmt: skip


def main(argv: Sequence[str]) -> int:
    """Print the table and the ratios of the cells under ``argv`` (``--design``: see above)."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    split = argv.index("--design") if "--design" in argv else len(argv)
    paths, design = list(argv[:split]), list(argv[split + 1 :])
    missing = [a for a in [*paths, *design] if not Path(a).exists()]
    if missing or not paths or (split < len(argv) and not design):
        print(f"parity_cost: no such folder: {', '.join(missing)} (give sweep or cell folders, "
              "then optionally --design and the release sign-off's)" if missing else
              "parity_cost: usage: CELLS... [--design DESIGN...]")  # fmt: skip
        return 2
    cells = ok_cells([Path(a) for a in paths])
    costs = [cell_cost(f, r) for f, r in cells]
    lines = [*table(costs), "", *summary_lines(ratios(costs))]
    if design:
        lines += ["", *design_lines(cells, ok_cells([Path(a) for a in design]))]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
