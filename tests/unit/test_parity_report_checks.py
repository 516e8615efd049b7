"""``parity_vs_baseline`` over hand-written parity files: pairing, the band's sources, the policy.

The cells are written in the on-disk format (``tests/helpers/report_cells.py``); each parity
folder holds what ``pipeline.measuring.parity_run`` writes, its summary built by that module's
own ``summary`` from scores whose divergence is set here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.measuring.parity_run import paired, summary
from pipeline.report.load.tolerance import ToleranceError, load_tolerance
from pipeline.results.cell_paths import parity_dir
from tests.helpers.report_cells import records, run_report, write_cell

SEQUENCES, TOKENS = 12, 20


def _sequences() -> list[dict]:
    return [{"question": f"p{i}", "prompt_ids": list(range(100, 116)),
             "output_ids": list(range(i, i + TOKENS))} for i in range(SEQUENCES)]  # fmt: skip


def _scores(shift: float, spread: float) -> list[dict]:
    """Logprobs of -1 moved by ``shift`` per token (x a per-sequence factor around 1)."""
    rows = []
    for i in range(SEQUENCES):
        factor = 1.0 + spread * (i % 3 - 1)
        lps = [-1.0 - shift * factor] * TOKENS
        top = [[[7, lp], [8, lp - 1.0]] for lp in lps]
        rows.append({"question": f"p{i}", "logprobs": lps, "top": top})
    return rows


def _write(folder: Path, rows: list[dict], name: str) -> None:
    parity_dir(folder).mkdir(parents=True, exist_ok=True)
    (parity_dir(folder) / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _cell(root: Path, variant: str, kv: str = "auto", shift: float | None = None,
          source: Path | None = None) -> Path:  # fmt: skip
    folder = root / f"{variant}-{kv}"
    rng = np.random.default_rng(0)
    write_cell(folder, variant, records(rng.random((40, 2)) < 0.7), kv=kv)
    if shift is None:  # a baseline: it generated the sequences
        _write(folder, _sequences(), "sequences.jsonl")
        _write(folder, _scores(0.0, 0.0), "scores.jsonl")
        return folder
    assert source is not None
    mine = _scores(shift, 0.5)
    _write(folder, mine, "scores.jsonl")
    seqs = paired(_sequences(), _scores(0.0, 0.0), mine)
    out = summary(seqs, [0, 1024], str(source))
    (parity_dir(folder) / "summary.json").write_text(json.dumps(out))
    return folder


def _parity(found: dict) -> dict[str, dict]:
    return {f"{c['variant']}/{c['kv_dtype']}": k for c in found["cells"] for k in c["checks"]
            if k["kind"] == "parity_vs_baseline"}  # fmt: skip


def _policy(root: Path, text: str) -> str:
    path = root / "policy.yaml"
    path.write_text(text)
    return str(path)


def test_a_reference_pair_widens_the_band_beyond_the_aa(tmp_path: Path) -> None:
    base = _cell(tmp_path, "fa3")
    _cell(tmp_path, "fa3_repeat", shift=1e-4, source=base)
    _cell(tmp_path, "flashinfer", shift=0.01, source=base)
    _cell(tmp_path, "fmha_v2", shift=0.012, source=base)
    policy = _policy(tmp_path, "parity:\n  metric: abs_delta\n  ceiling: 1.0\n"
                               "  reference: flashinfer\n")  # fmt: skip
    code, found = run_report([tmp_path], tmp_path / "out", "--tolerance", policy)
    checks = _parity(found)
    cand = checks["fmha_v2/auto"]["numbers"]
    assert cand["band_source"] == "reference" and "flashinfer" in cand["reference_cell"]
    assert cand["band"] == pytest.approx(2 * cand["reference_upper"])
    assert checks["fmha_v2/auto"]["verdict"] == "GO"  # 0.012 is inside 2 x flashinfer's ~0.01
    assert [e["variant"] for e in found["parity"]] == ["fa3_repeat", "flashinfer", "fmha_v2"]
    # the pair sets the band; judged by a band of its own width it would pass by construction
    own = checks["flashinfer/auto"]
    assert own["verdict"] == "INFO" and "not judged against itself" in own["message"]
    # without the pair the A/A's band (2 x ~1e-4) sets it: NO-GO, and the exit code says so
    code, found = run_report([tmp_path], tmp_path / "aa", "--tolerance",
                             _policy(tmp_path, "parity:\n  metric: abs_delta\n"))  # fmt: skip
    assert _parity(found)["fmha_v2/auto"]["verdict"] == "NO-GO" and code == 1


def test_the_ceiling_caps_the_band(tmp_path: Path) -> None:
    base = _cell(tmp_path, "fa3")
    _cell(tmp_path, "fa3_repeat", shift=0.05, source=base)
    _cell(tmp_path, "fmha_v2", shift=0.06, source=base)
    policy = _policy(tmp_path, "parity:\n  metric: abs_delta\n  ceiling: 0.01\n")
    _, found = run_report([tmp_path], tmp_path / "out", "--tolerance", policy)
    cand = _parity(found)["fmha_v2/auto"]
    assert cand["numbers"]["band"] == 0.01 and cand["numbers"]["band_source"] == "ceiling"
    assert cand["verdict"] == "NO-GO"


def test_a_kv_dtype_scored_against_the_bf16_baseline_says_how_it_was_paired(
    tmp_path: Path,
) -> None:
    base = _cell(tmp_path, "fa3")
    _cell(tmp_path, "fa3_repeat", shift=1e-4, source=base)
    _cell(tmp_path, "fa3", kv="fp8_e4m3", shift=1e-4, source=base)
    _, found = run_report([tmp_path], tmp_path / "out", "--tolerance",
                          _policy(tmp_path, "parity:\n  metric: abs_delta\n"))  # fmt: skip
    fp8 = _parity(found)["fa3/fp8_e4m3"]
    assert "parity.sequences_from names this fa3 cell" in fp8["numbers"]["paired_by"]
    assert fp8["verdict"] in ("GO", "INCONCLUSIVE")


def test_sequences_of_a_cell_that_is_not_a_baseline_are_not_judged(tmp_path: Path) -> None:
    base = _cell(tmp_path, "fa3")
    other = _cell(tmp_path, "triton", shift=0.0, source=base)
    _cell(tmp_path, "fmha_v2", shift=0.01, source=other)
    _, found = run_report([tmp_path], tmp_path / "out")
    cand = _parity(found)["fmha_v2/auto"]
    assert cand["verdict"] == "NO BASELINE" and "is not a fa3 cell" in cand["message"]


@pytest.mark.parametrize(
    ("block", "said"),
    [("parity:\n  metric: kl\n", "kl_topk"), ("parity:\n  floor: 0.1\n  ceiling: 0.01\n", "floor"),
     ("parity:\n  noise_factor: 0.5\n", "noise_factor"), ("parity:\n  band: 1\n", "band")],
)  # fmt: skip
def test_a_wrong_parity_block_is_refused_naming_the_key(tmp_path: Path, block, said) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(block)
    with pytest.raises(ToleranceError, match=said):
        load_tolerance(str(path))
