"""Repeat-to-repeat spread of the live sign-off, and the A/A difference.

    python -m benchmarks.live_h200.aa_spread [--write]

Reads the committed samples (``signoff/samples.tar.xz``, extracted to a temporary folder) of the
fa3 cells (``r2-base``: 24 repeats, ``base-auto``: 8) and of their A/A partners (``fa3_repeat``,
a separate server start: ``r2-aa``, ``s-a3``), and measures per eval how much one question's
outcome moves from repeat to repeat at temperature 0.6: the share of questions with mixed
outcomes, the mean within-question variance ``p_q (1 - p_q)``, the intraclass correlation, the
SD of one repeat's accuracy against the binomial ``sqrt(sum p_q (1 - p_q)) / Q``, and the A/A
paired difference with its SE clustered by question; the same for the per-request accept length.
It sets these beside what the simulated server and the sign-off simulations assume, and with
``--write`` writes ``benchmarks/results/live-h200/aa_spread.md`` and ``aa_spread.json``.
"""

from __future__ import annotations

import argparse
import json
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from benchmarks.signoff_sim.release_sim import beta_questions
from benchmarks.signoff_sim.simulation import gpqa_like
from pipeline.stats.clustered import question_means, within_question_se

ROOT = Path(__file__).resolve().parents[2]

SIGNOFF = ROOT / "benchmarks" / "results" / "live-h200" / "signoff"
OUT = ROOT / "benchmarks" / "results" / "live-h200" / "aa_spread"
EVALS = ("synth_mcq", "synth_arith", "synth_retrieval")
CELLS = {  # label -> the cell's folder in the archive
    "fa3 (r2-base)": "r2-base/0_synth-llama_fa3_auto_exact",
    "fa3_repeat (r2-aa)": "r2-aa/0_synth-llama_fa3_repeat_auto_exact",
    "fa3 (base-auto)": "base-auto/0_synth-llama_fa3_auto_exact",
    "fa3_repeat (s-a3)": "s-a3/2_synth-llama_fa3_repeat_auto_exact",
}
PAIRS = (("fa3 (r2-base)", "fa3_repeat (r2-aa)"), ("fa3 (base-auto)", "fa3_repeat (s-a3)"))
TINY = 1e-12  # variance below this is float noise of identical values
Samples = dict[str, dict[int, tuple[float, float]]]  # question -> repeat -> (correct, accept)


@dataclass(frozen=True)
class Spread:
    """How one cell's values spread over questions and over repeats of one question."""

    mean: float
    repeats: int  # per question (the most any question has)
    mixed_share: float  # questions whose repeats do not all agree
    within_var: float  # mean over questions of the unbiased repeat variance (p_q (1 - p_q))
    between_var: float  # variance over questions of the per-question means
    icc: float  # one-way ANOVA intraclass correlation over repeats of a question
    sd_observed: float  # SD over repeats of the per-repeat mean (all questions answered)
    sd_predicted: float  # sqrt(sum within_var_q) / Q: independent repeats given the question


@dataclass(frozen=True)
class PairedDifference:
    """Candidate minus baseline on the repeats both have, paired by question."""

    diff: float
    se: float  # clustered by question: SD of per-question differences / sqrt(Q)
    se_sampling: float  # from the repeat-to-repeat variance alone, the cells drawn independently
    agreement: float  # share of (question, repeat) pairs with equal values (same request seed)
    agreement_independent: float  # the same if the cells drew independently given the question
    shared_share: float  # of the within-question variance, the part both cells share per prompt
    repeats: int
    questions: int


def matrix_of(samples: Samples, field: int, repeats: Iterable[int] | None = None) -> np.ndarray:
    """``(questions, repeats)`` values (0: correctness, 1: accept length), NaN where missing.

    Columns are repeat indices (all of them, or ``repeats``); rows are sorted question ids.
    """
    every = {r for q in samples.values() for r in q}
    cols = sorted(every if repeats is None else repeats)
    out = np.full((len(samples), len(cols)), np.nan)
    for row, qid in enumerate(sorted(samples)):
        for col, rep in enumerate(cols):
            if rep in samples[qid]:
                out[row, col] = samples[qid][rep][field]
    return out


def anova_icc(matrix: np.ndarray) -> float:
    """One-way random-effects ICC(1) with the unbalanced ``k0`` (rows: groups, NaN: missing)."""
    k = np.sum(~np.isnan(matrix), axis=1).astype(float)
    n, total = len(k), k.sum()
    means = question_means(matrix)
    grand = np.nansum(matrix) / total
    msb = float(np.sum(k * (means - grand) ** 2) / (n - 1))
    msw = float(np.nansum((matrix - means[:, None]) ** 2) / (total - n))
    k0 = (total - np.sum(k**2) / total) / (n - 1)
    denom = msb + (k0 - 1) * msw
    return (msb - msw) / denom if denom > 0 else float("nan")


def spread_of(matrix: np.ndarray) -> Spread:
    """The ``Spread`` of a ``(questions, repeats)`` matrix (every question has two repeats)."""
    var_q = np.nanvar(matrix, axis=1, ddof=1)
    full = ~np.isnan(matrix).any(axis=0)
    per_repeat = np.mean(matrix[:, full], axis=0)
    return Spread(
        mean=float(np.nanmean(question_means(matrix))),
        repeats=int(np.max(np.sum(~np.isnan(matrix), axis=1))),
        mixed_share=float(np.mean(var_q > TINY)),
        within_var=float(np.mean(var_q)),
        between_var=float(np.var(question_means(matrix), ddof=1)),
        icc=anova_icc(matrix),
        sd_observed=float(np.std(per_repeat, ddof=1)) if full.sum() > 1 else float("nan"),
        sd_predicted=float(np.sqrt(np.sum(var_q)) / len(var_q)),
    )


def paired_difference(base: np.ndarray, cand: np.ndarray) -> PairedDifference:
    """``cand - base`` from two matrices over the same questions and repeat columns."""
    d = question_means(cand) - question_means(base)
    se_a, se_b = within_question_se(base), within_question_se(cand)
    pa, pb = question_means(base), question_means(cand)
    return PairedDifference(
        diff=float(np.mean(d)),
        se=float(np.std(d, ddof=1) / np.sqrt(len(d))),
        se_sampling=float(np.hypot(se_a or 0.0, se_b or 0.0)),
        agreement=float(np.mean(np.isclose(base, cand))),
        agreement_independent=float(np.mean(pa * pb + (1 - pa) * (1 - pb))),
        shared_share=shared_share(base, cand),
        repeats=base.shape[1],
        questions=len(d),
    )


def shared_share(base: np.ndarray, cand: np.ndarray) -> float:
    """Share of the within-question variance of 0/1 outcomes that two cells share per repeat.

    With outcome ``(q, r)`` drawn from ``p_qr`` in both cells (the same prompt, e.g. one option
    order), ``P(agree) - P_independent(agree) = 2 Var_r(p_qr)`` while the within-question
    variance is ``E[p_qr (1 - p_qr)] + Var_r(p_qr)``. 0: the cells sample independently.
    """
    pa, pb = question_means(base), question_means(cand)
    excess = np.mean(np.isclose(base, cand)) - np.mean(pa * pb + (1 - pa) * (1 - pb))
    # Plug-in variances, as the independent agreement uses plug-in p_q: identical cells give 1.
    within = np.mean([np.nanvar(m, axis=1) for m in (base, cand)])
    return float(excess / (2 * within)) if within > TINY else float("nan")


def samples_of(lines: Iterable[str]) -> Samples:
    """Per question and repeat ``(correct, accept length)`` from sample JSONL lines."""
    out: Samples = {}
    for line in lines:
        if line.strip():
            row = json.loads(line)
            spec = row.get("spec") or {}
            accept = spec.get("accept_length")
            out.setdefault(row["question_id"], {})[int(row["repeat"])] = (
                float(bool(row["correct"])),
                float("nan") if accept is None else float(accept),
            )
    return out


def common_repeats(a: Samples, b: Samples) -> list[int]:
    """Repeat indices every question has in both cells."""
    reps = [set.intersection(*(set(q) for q in s.values())) for s in (a, b)]
    return sorted(reps[0] & reps[1])


def beta_model(p: np.ndarray, repeats: int) -> dict[str, float]:
    """What a fixed set of success probabilities implies, drawn independently per repeat."""
    m = float(np.mean(p))
    return {
        "mean": m,
        "icc": float(np.var(p) / (m * (1 - m))),
        "within_var": float(np.mean(p * (1 - p))),
        "mixed_share": float(np.mean(1 - p**repeats - (1 - p) ** repeats)),
        "sd_one_repeat": float(np.sqrt(np.sum(p * (1 - p))) / len(p)),
    }


def measure(folder: Path) -> dict[str, dict[str, object]]:
    """Every eval's cell spreads and A/A differences from an extracted samples archive."""
    out: dict[str, dict[str, object]] = {}
    for ev in EVALS:
        files = {k: folder / v / "samples" / f"{ev}.jsonl" for k, v in CELLS.items()}
        data = {k: samples_of(f.read_text().splitlines()) for k, f in files.items()}
        cells = {k: {"correct": spread_of(matrix_of(s, 0)), "accept": spread_of(matrix_of(s, 1))}
                 for k, s in data.items()}  # fmt: skip
        pairs = {}
        for a, b in PAIRS:
            reps = common_repeats(data[a], data[b])
            pairs[f"{b} - {a}"] = {
                f: paired_difference(matrix_of(data[a], i, reps), matrix_of(data[b], i, reps))
                for i, f in enumerate(("correct", "accept"))
            }
        out[ev] = {"cells": cells, "pairs": pairs}
    return out


def to_json(value: object) -> object:
    """Dataclasses and nested mappings as plain JSON values."""
    if isinstance(value, Spread | PairedDifference):
        return to_json(asdict(value))
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, float) and np.isnan(value):
        return None  # JSON has no NaN
    return float(value) if isinstance(value, float) else value


def extracted(archive: Path, into: Path) -> Path:
    """Extract the samples archive into ``into`` (the data filter where this Python has it)."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # 3.11.4+ / 3.10.12+: no links or absolute paths
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)  # our own committed archive
    return into


def assumed(repeats: int) -> dict[str, dict[str, float]]:
    """What the simulated server and the two sign-off simulations assume, at ``repeats``."""
    server = {"mean": float("nan"), "icc": 1.0, "within_var": 0.0, "mixed_share": 0.0,
              "sd_one_repeat": 0.0}  # fmt: skip
    return {
        "simulated server (model.py: hash(seed, prompt) < accuracy)": server,
        "release_sim.beta_questions (198 q, mean 0.70, SD 1.5 pt)": beta_model(
            beta_questions(), repeats
        ),
        "stats.simulation.gpqa_like (signoff_rules_comparison; 198 q, 20% uncertain)": beta_model(
            gpqa_like().p, repeats
        ),
    }


def simulated_se(repeats: int, questions: int) -> float:
    """The paired SE release_sim's question set implies at ``repeats`` and ``questions``."""
    p = beta_questions()
    return float(np.sqrt(2 * np.mean(p * (1 - p)) / (repeats * questions)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=SIGNOFF / "samples.tar.xz")
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}.md and .json")
    opts = parser.parse_args()
    from benchmarks.live_h200.aa_spread_md import markdown  # the tables import this module

    with tempfile.TemporaryDirectory(prefix="aa-spread-") as tmp:
        result = measure(extracted(opts.archive, Path(tmp)))
    text = markdown(result)
    print(text)
    if opts.write:
        OUT.with_suffix(".md").write_text(text, encoding="utf-8")
        payload = {
            "command": "python -m benchmarks.live_h200.aa_spread --write",
            "evals": to_json(result),
            "assumed": {"K=24": assumed(24), "K=8": assumed(8)},
        }
        OUT.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
