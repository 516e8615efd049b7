"""``lossless_vs_spec_off``: a speculative cell's greedy outputs against speculation off (item 3).

Each ok speculative cell with ``parity/greedy.jsonl`` is compared with the ok cell of the same
GPU, model, variant, KV dtype and skip-softmax factors that ran with speculation off and kept
the same prompts' greedy outputs: the exact-match rate and each mismatch's first divergent
position. Under ``--enable-deterministic-inference`` (both servers) any difference is a FAIL
naming the request and position; without it, greedy outputs may differ legitimately (batch
order, kernels' reduction order), so the figures are shown (INFO) and not judged. SGLang refuses
deterministic mode for trtllm_mha (``backends/compat_rules.py``): such a cell is UNSUPPORTED
and the check says deterministic mode is not available there, never a failure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.report.judge.check_kinds import LOSSLESS
from pipeline.report.judge.check_numbers import LosslessNumbers
from pipeline.report.judge.verdicts import FAIL, INFO, NO_BASELINE, PASS, Check, make_check
from pipeline.report.load.cells import CellRecord
from pipeline.results.cell_paths import parity_dir

GREEDY = "greedy.jsonl"
DETERMINISTIC = "--enable-deterministic-inference"
REFUSED = (
    "SGLang refuses --enable-deterministic-inference for this attention backend (trtllm_mha: "
    "no deterministic path); losslessness is not judged under deterministic mode here"
)


def _greedy(folder: Path | None) -> dict[str, list[int]] | None:
    path = parity_dir(folder) / GREEDY if folder is not None else None
    if path is None or not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {str(r["question"]): [int(x) for x in r["output_ids"]] for r in rows}


def _same_arm(a: CellRecord, b: CellRecord) -> bool:
    keys = ("gpu", "model", "variant", "kv_dtype", "skip_prefill", "skip_decode")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def _deterministic(cell: CellRecord) -> bool:
    return DETERMINISTIC in cell.result.server_argv


def first_divergence(a: Sequence[int], b: Sequence[int]) -> int | None:
    """The first output position where the two differ (None: equal)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def lossless_checks(cells: Sequence[CellRecord], pool: Sequence[CellRecord]) -> list[Check]:
    """One check per speculative cell that kept greedy outputs (and per refused one)."""
    out = []
    for cell in cells:
        if cell.status == "unsupported" and DETERMINISTIC in " ".join(cell.overrides):
            out.append(make_check(cell, None, LOSSLESS, INFO, REFUSED))
            continue
        mine = _greedy(cell.folder) if cell.status == "ok" and cell.speculative else None
        if mine is None:
            continue
        offs = [c for c in pool if c.status == "ok" and not c.speculative and _same_arm(c, cell)]
        found = [(c, g) for c in offs if (g := _greedy(c.folder)) is not None]
        if not found:
            why = "no ok cell of this variant with speculation off kept greedy outputs"
            out.append(make_check(cell, None, LOSSLESS, NO_BASELINE, why))
            continue
        out.append(_compare(cell, mine, *found[0]))
    return out


def _compare(
    cell: CellRecord, mine: dict[str, list[int]], off: CellRecord, theirs: dict[str, list[int]]
) -> Check:
    shared = [q for q in mine if q in theirs]
    diverged = {q: first_divergence(mine[q], theirs[q]) for q in shared}
    differ = {q: p for q, p in diverged.items() if p is not None}
    rate = 1 - len(differ) / len(shared) if shared else 0.0
    deterministic = _deterministic(cell) and _deterministic(off)
    numbers = LosslessNumbers(off.label, len(shared), rate, dict(sorted(differ.items())),
                              deterministic)  # fmt: skip
    said = ", ".join(f"{q} at output position {p}" for q, p in sorted(differ.items())[:10])
    head = f"greedy exact match {len(shared) - len(differ)}/{len(shared)} against {off.label}"
    if not deterministic:
        note = "; not deterministic mode on both: shown, not judged"
        return make_check(cell, None, LOSSLESS, INFO, head + (f" ({said})" if said else "") + note,
                          numbers)  # fmt: skip
    if differ:
        message = f"{head} under deterministic mode: differs at {said}"
        return make_check(cell, None, LOSSLESS, FAIL, message, numbers)
    return make_check(cell, None, LOSSLESS, PASS, f"{head} under deterministic mode", numbers)
