"""The report's tables in order (``sections``), as ``Section`` rows both renderers read."""

from __future__ import annotations

import math
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import (
    ACCEPT_VS_BASELINE,
    ACCURACY_VS_BASELINE,
    REFERENCE_KINDS,
    STATUS,
)
from pipeline.report.judge.check_numbers import UNSET
from pipeline.report.judge.describe import aborted_note, pts, rel
from pipeline.report.judge.drop_numbers import (
    AcceptVsBaselineNumbers,
    AcceptVsReferenceNumbers,
    AccuracyVsBaselineNumbers,
    AccuracyVsReferenceNumbers,
    DropNumbers,
)
from pipeline.report.judge.verdicts import OK, Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.write.dependence_table import dependence_section
from pipeline.report.write.section import WHO, Section, sort_key, who
from pipeline.results.json_values import as_map


def questions_anchor(check: Check) -> str:
    """The HTML anchor of a candidate's "Questions that changed" view on the check's eval."""
    raw = f"changed-{check.cell_id}-{check.eval}"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in raw)


def _extra(check: Check) -> str:
    if check.adjusted is None or check.adjusted.extra_repeats is UNSET:
        return ""
    extra = check.adjusted.extra_repeats
    if extra is None:
        return "not by repeats"
    return "+99 or more" if extra > 99 else f"+{extra}"


def _p(check: Check) -> str:
    a = check.adjusted
    p_go, p_nogo = (a.p_go_adjusted, a.p_nogo_adjusted) if a else (math.nan, math.nan)
    return f"{p_go:.3g} / {p_nogo:.3g}"


def _pts_bounds(n: DropNumbers) -> str:
    # The bounds the verdict reads (null-variance SE) when the check has them.
    if isinstance(n, AccuracyVsBaselineNumbers):
        return f"[{pts(n.nogo_bound)}, {pts(n.go_bound)}]"
    return f"[{pts(n.lower)}, {pts(n.upper)}]"


def _rel_bounds(n: DropNumbers) -> str:
    return f"[{100 * rel(n.lower):.2f}%, {100 * rel(n.upper):.2f}%]"


def sections(report: Report) -> list[Section]:
    """All tables of the report, in order (empty ones left out)."""
    cells = sorted(report.cells, key=sort_key)
    by_id = {c.id: c for c in cells}
    checks = sorted(report.checks, key=lambda k: (sort_key(by_id[k.cell_id]), k.eval or ""))
    rows = [(by_id[c.cell_id], c) for c in checks]
    base = report.tolerance.baseline
    found = [_cells(report, cells), what_ran(cells), _prefill(cells), _accuracy(rows, base),
             dependence_section(rows), _accept(rows, base), _references(rows, base),
             _other(rows, base), _problems(cells)]  # fmt: skip
    return [s for s in found if s.rows]


def _cells(report: Report, cells: list[CellRecord]) -> Section:
    head = "speculative|status|verdict|unverified (not reported by the server)|folder"
    sec = Section("Cells", (WHO + head).split("|"))
    for cell in cells:
        spec = (cell.speculative or {}).get("algorithm") or "off"
        status, verdict = cell.status.upper(), report.cell_verdict(cell)
        note = report.cell_note(cell)
        verdict += f" ({note})" if note else ""
        unverified = "; ".join(cell.unverified) or "-"
        folder = str(cell.folder or "(none)")
        sec.rows.append([*who(cell), str(spec), status, verdict, unverified, folder])
    return sec


KERNEL_ROLES = ("prefill", "decode", "verify", "draft")


def what_ran(cells: list[CellRecord]) -> Section:
    """Per cell: the kernel of each attention role, the SGLang and FlashInfer versions, the commit.

    The SGLang version is the one the server reported (else the one the cell planned for);
    FlashInfer's is the pipeline host's package (the server's own, when the pipeline started
    it there).
    """
    head = "|".join(KERNEL_ROLES) + "|SGLang|FlashInfer|mtp-eval commit"
    sec = Section("What ran", (WHO + head).split("|"))
    for cell in cells:
        if cell.status == "missing":
            continue
        result = cell.result
        runs = result.runs
        sglang = result.cell.server_version or result.cell.sglang_version
        flashinfer = result.provenance.packages.get("flashinfer-python")
        git = result.provenance
        commit = str(git.git_sha or "?")[:10] + (" (dirty)" if git.git_dirty else "")
        commit += f" ({git.git_source})" if git.git_source not in (None, "git") else ""
        kernels = [str(runs.get(role) or "-") for role in KERNEL_ROLES]
        versions = [str(sglang or "?"), str(flashinfer or "not installed"), commit]
        sec.rows.append([*who(cell), *kernels, *versions])
    return sec


PREFILL_INTRO = (
    "The server's own prefill time per request (SGLang's meta_info prefill_finished_time - "
    "forward_entry_time, with --enable-metrics), averaged over the eval's requests that have it. "
    "It is scheduler wall clock: with chunked prefill or other requests in the same batches, "
    "their work is inside it too, so compare cells run under the same load. A cell whose "
    "server wrote new files into its JIT cache compiled kernels while it ran: its first "
    "requests' prefill may hold the compile, and a mean is not robust to that."
)


def _prefill(cells: list[CellRecord]) -> Section:
    head = "eval|mean prefill (s)|prefill s per 1k prompt tokens|mean prompt tokens|JIT compiles"
    sec = Section("Prefill time", (WHO + head).split("|"), intro=PREFILL_INTRO)
    for cell in cells:
        for name, ev in cell.evals.items():
            if ev.mean_prefill_s is not None:
                tokens = ev.data.get("mean_prompt_tokens")
                values = [_number(ev.mean_prefill_s, ".4f"),
                          _number(ev.prefill_s_per_1k_prompt_tokens, ".4f"),
                          _number(tokens, ".0f"), _compiled(cell)]  # fmt: skip
                sec.rows.append([*who(cell), name, *values])
    return sec


def _compiled(cell: CellRecord) -> str:
    """What the cell's server added to its JIT cache (``server.jit_cache``; "-": not recorded)."""
    new = as_map(as_map(cell.result.raw.get("server")).get("jit_cache")).get("new_files")
    if not isinstance(new, int):
        return "-"
    return "none" if new == 0 else f"{new:,} new cache files during the cell"


def _number(value: Any, spec: str) -> str:
    return format(value, spec) if isinstance(value, int | float) else "-"


def _paired_set(n: AccuracyVsBaselineNumbers) -> str:
    # What was compared and what was left out, beside the verdict: a smaller set than asked shows.
    how = "by repeat" if n.pairing.endswith("and repeat") else "by question"
    rates = n.rates
    return (
        f"{n.n_questions} q x {n.repeats} ({how}); errors "
        f"{100 * rates.get('base_error', 0):.1f}% / {100 * rates.get('cand_error', 0):.1f}%, "
        f"truncated {100 * rates.get('base_truncated', 0):.1f}% / "
        f"{100 * rates.get('cand_truncated', 0):.1f}%"
        + aborted_note(rates)
        + (f"; baseline: {n.note}" if n.note else "")
    )


def _accuracy(rows: list[tuple[CellRecord, Check]], base: str) -> Section:
    title = f"Accuracy vs the baseline variant ({base}), paired on answered requests"
    head = "eval|change (pts)|95% CI of the drop|one-sided drop bounds|margin|p GO / NO-GO (adj.)"
    tail = "|verdict|paired set; errors, truncated (base / cand)|extra repeats|why undecided"
    sec = Section(title, (WHO + head + tail).split("|"))
    for cell, c in rows:
        if c.kind == ACCURACY_VS_BASELINE and isinstance(n := c.numbers, AccuracyVsBaselineNumbers):
            ci = f"[{pts(n.ci95[0])}, {pts(n.ci95[1])}]"
            values = [pts(-n.drop, True), ci, _pts_bounds(n), pts(n.margin), _p(c)]
            why = str(n.undecided_because or "") if c.verdict == "INCONCLUSIVE" else ""
            sec.links[len(sec.rows)] = questions_anchor(c)
            sec.rows.append([*who(cell), str(c.eval), *values, c.verdict, _paired_set(n),
                             _extra(c), why])  # fmt: skip
    return sec


def _accept(rows: list[tuple[CellRecord, Check]], base: str) -> Section:
    title = f"Accept length vs the baseline variant ({base}), paired by prompt"
    head = f"eval|accept length|{base}|relative drop|one-sided bounds|band|p GO / NO-GO (adj.)"
    sec = Section(title, (WHO + head + "|verdict").split("|"))
    for cell, c in rows:
        if c.kind == ACCEPT_VS_BASELINE and isinstance(n := c.numbers, AcceptVsBaselineNumbers):
            lengths = [f"{n.accept_length_candidate:.3f}", f"{n.accept_length_baseline:.3f}"]
            values = [f"{100 * rel(n.drop):.2f}%", _rel_bounds(n), f"{100 * n.band:g}%"]
            sec.rows.append([*who(cell), str(c.eval), *lengths, *values, _p(c), c.verdict])
    return sec


def _references(rows: list[tuple[CellRecord, Check]], base: str) -> Section:
    head = "check|measured|reference|one-sided drop bounds|margin|verdict|extra repeats|source"
    sec = Section("Against reference values", (WHO + head).split("|"))
    for cell, c in rows:
        n = c.numbers
        if c.kind not in REFERENCE_KINDS:
            continue
        if isinstance(n, AccuracyVsReferenceNumbers):
            values = [f"{n.accuracy:.4f}", f"{n.reference:.4f}", _pts_bounds(n) + " pts",
                      f"{pts(n.margin)} pts"]  # fmt: skip
        elif isinstance(n, AcceptVsReferenceNumbers):
            values = [f"{n.accept_length:.3f}", f"{n.reference:.3f}", _rel_bounds(n),
                      f"{100 * n.band:g}%"]  # fmt: skip
        else:
            continue
        source = f"{n.source['source']} ({n.source['date']})"
        sec.rows.append([*who(cell), c.title(base), *values, c.verdict, _extra(c), source])
    return sec


def _other(rows: list[tuple[CellRecord, Check]], base: str) -> Section:
    # Everything without numbers of its own: accept metric, McNemar, no baseline / reference,
    # errors. Cell status is in the Cells and problem tables.
    title = "Other checks (accept metric, McNemar, missing baselines and references, errors)"
    sec = Section(title, (WHO + "check|verdict|details").split("|"))
    for cell, c in rows:
        if (c.kind == STATUS and c.verdict == OK) or isinstance(c.numbers, DropNumbers):
            continue
        if c.kind == STATUS and cell.status != "ok":
            continue
        sec.rows.append([*who(cell), c.title(base), c.verdict, c.message])
    return sec


def _problems(cells: list[CellRecord]) -> Section:
    title = "Missing, failed, misconfigured, unsupported and planned cells"
    sec = Section(title, (WHO + "status|why|overrides").split("|"))
    for cell in cells:
        if cell.status != "ok":
            sec.rows.append([*who(cell), cell.status.upper(), cell.note, " ".join(cell.overrides)])
    return sec
