"""Text, Markdown and JSON views of the compatibility matrix (``backends.matrix``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from backends.rule import FATAL

if TYPE_CHECKING:  # matrix imports this module to render its cells
    from backends.matrix import MatrixCell

SHORT_OUTCOME = {
    "ok": "ok",
    "adjust": "adj",
    "no-effect": "n/e",
    "reject": "REJECT",
    "crash-at-start": "CRASH",
}
SHORT_KERNEL = {"flashinfer": "fi", "trtllm-gen": "tgen", "fmha_v2": "fmha2", "triton": "tri"}
ROW_HEAD = ("variant", "kv", "skip", "spec")
LEGEND = (
    "kernels: prefill/decode[/verify[+draft where it differs]]; "
    "fi=flashinfer tgen=trtllm-gen fmha2=fmha_v2 tri=triton; "
    "adj=adjusted by SGLang, n/e=a setting has no effect"
)


def _kernels(cell: MatrixCell, short: bool) -> str:
    phases = ("prefill", "decode", "verify") if cell.speculative else ("prefill", "decode")
    names = [cell.runs[p] for p in phases]
    draft = cell.runs.get("draft")
    extra = [] if draft in (None, cell.runs.get("verify")) else [draft]
    if short:
        text = "/".join(SHORT_KERNEL.get(n, n) for n in names)
        return "+".join([text, *(SHORT_KERNEL.get(n, n) for n in extra)])
    return " + ".join([" / ".join(names), *extra])


def label(cell: MatrixCell, short: bool) -> str:
    """A cell's outcome and, when it runs, its prefill/decode[/verify[+draft]] kernels."""
    if cell.outcome in FATAL:
        return SHORT_OUTCOME[cell.outcome] if short else f"**{cell.outcome}**"
    if short:
        return f"{SHORT_OUTCOME[cell.outcome]} {_kernels(cell, short=True)}"
    return f"{cell.outcome}: {_kernels(cell, short=False)}"


def _rows(cells: Sequence[MatrixCell], short: bool) -> list[list[str]]:
    rows: dict[tuple[str, str, bool, bool], list[str]] = {}
    for cell in cells:
        head = (cell.variant, cell.kv_dtype, cell.skip_softmax, cell.speculative)
        row = rows.setdefault(head, [head[0], head[1], _on(head[2]), _on(head[3])])
        row.append(label(cell, short))
    return list(rows.values())


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def _rules_fired(cells: Sequence[MatrixCell]) -> list[str]:
    counts = Counter((f.rule, f.outcome, f.text) for c in cells for f in c.findings)
    return [f"{rule} ({outcome}, {n} cells): {text}" for (rule, outcome, text), n in counts.items()]


def render_text(cells: Sequence[MatrixCell], title: str, families: Sequence[str]) -> str:
    """A fixed-width terminal table, one row per variant x kv x skip x spec."""
    table = [[*ROW_HEAD, *families], *_rows(cells, short=True)]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [title, ""]
    for i, row in enumerate(table):
        lines.append("  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", LEGEND, "", "rules that fired:"]
    lines += [f"  {line}" for line in _rules_fired(cells)]
    return "\n".join(lines) + "\n"


def render_markdown(cells: Sequence[MatrixCell], title: str, families: Sequence[str]) -> str:
    """A Markdown table plus the rules that fired, with SGLang's messages."""
    head = [*ROW_HEAD, *families]
    lines = [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(cells, short=False)]
    lines += ["", "Kernels are prefill / decode [/ verify].", "", "### Rules that fired", ""]
    lines += [f"- {line}" for line in _rules_fired(cells)]
    return "\n".join(lines) + "\n"


def render_json(cells: Sequence[MatrixCell], version: str, model: str) -> str:
    """Every cell with its findings and notes."""
    body = {"sglang_version": version, "model": model, "cells": [asdict(c) for c in cells]}
    return json.dumps(body, indent=1) + "\n"


def render(
    cells: Sequence[MatrixCell], fmt: str, version: str, model: str, families: Sequence[str]
) -> str:
    """Render the matrix as ``text``, ``markdown`` or ``json``."""
    title = f"SGLang {version}: backend variants x GPU family (model {model})"
    if fmt == "json":
        return render_json(cells, version, model)
    if fmt == "markdown":
        return render_markdown(cells, title, families)
    return render_text(cells, title, families)
