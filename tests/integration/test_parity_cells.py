"""The parity phase end to end: real ``mtp-eval`` cells on the simulated server (issue 39).

fa3 generates and re-scores its sequences; fa3_repeat (a second start: the A/A) and fmha_v2
(whose simulated logits carry noise of sigma 0.2, ``logit_sigma``) re-score them. The A/A's
divergence is zero (the simulated starts are bit-identical without ``restart_sigma``), fmha_v2's
is the perturbation's KL, and the verdict over the two summaries says GO and NO-GO.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from pipeline.results.cell_paths import parity_dir
from pipeline.results.store import read_result
from pipeline.stats.parity_verdict import (
    GO,
    NOGO,
    ClusteredMean,
    parity_band,
    parity_verdict,
)
from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
PARITY = [
    "evals=[]", "parity.enabled=true", "parity.sequences=16", "parity.prompt_tokens=16",
    "parity.new_tokens=32", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05",
    "server.simulated.effects=[{match:{attention_backend:trtllm_mha},logit_sigma:0.2}]",
]  # fmt: skip


def cell(folder: Path, backend: str, *extra: str) -> dict:
    run = run_script("mtp-eval", f"backend={backend}", *PARITY, *extra, f"output_dir={folder}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = read_result(folder)
    assert result is not None and result.status == "ok"
    return (
        json.loads((parity_dir(folder) / "summary.json").read_text())
        if (parity_dir(folder) / "summary.json").is_file()
        else {}
    )


def sweep(folder: Path, backends: list[str], *extra: str) -> list[dict]:
    """``cell``'s summaries of a sweep's cells, one per backend: one process start for them all."""
    run = run_script("mtp-eval", "-m", f"backend={','.join(backends)}", *PARITY, *extra,
                     f"hydra.sweep.dir={folder}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    found = []
    for backend in backends:
        (cell_dir,) = folder.glob(f"*_tiny-sim_{backend}_auto_exact")
        result = read_result(cell_dir)
        assert result is not None and result.status == "ok"
        found.append(json.loads((parity_dir(cell_dir) / "summary.json").read_text()))
    return found


def topk(summary: dict) -> ClusteredMean:
    m = summary["metrics"]["kl_topk"]
    return ClusteredMean(
        m["estimate"], m["se"], m["lower"], m["upper"], m["questions"], m["tokens"]
    )


def test_parity_cells_rescore_the_baselines_sequences_and_judge(tmp_path):
    base = tmp_path / "fa3"
    assert cell(base, "fa3") == {}  # the baseline generates: nothing to compare with
    sequences = (parity_dir(base) / "sequences.jsonl").read_text().splitlines()
    assert len(sequences) == 16
    scores = (parity_dir(base) / "scores.jsonl").read_text().splitlines()
    for seq, score in zip(map(json.loads, sequences), map(json.loads, scores), strict=True):
        # decoding at temperature 1 reported what the prefill re-score reports (item 2's data)
        assert seq["decode_logprobs"] == score["logprobs"] and seq["decode_top"] == score["top"]
    aa, cand = sweep(tmp_path / "s", ["fa3_repeat", "fmha_v2"], f"parity.sequences_from={base}")
    assert aa["sequences_from"] == str(base) and aa["sequences"] == 16
    assert topk(aa).estimate == 0.0 and aa["metrics"]["top1_disagree"]["estimate"] == 0.0
    assert 0.005 < topk(cand).estimate < 0.03  # sigma 0.2: about sigma^2 / 2 * 0.6 per token
    assert [b["low"] for b in cand["bins"]] == [0, 1024, 4096, 16384]
    assert cand["bins"][0]["kl_topk"]["tokens"] == topk(cand).tokens  # short prompts: bin 0
    band = parity_band(topk(aa), ceiling=0.05, floor=1e-3)
    assert parity_verdict(topk(cand), band).verdict == NOGO
    assert parity_verdict(topk(aa), band).verdict == GO


def test_a_missing_source_fails_the_cell_naming_the_file(tmp_path):
    run = run_script("mtp-eval", "backend=fa3", *PARITY, f"parity.sequences_from={tmp_path}/none",
                     f"output_dir={tmp_path}/cell")  # fmt: skip
    assert run.returncode != 0
    result = read_result(tmp_path / "cell")
    assert result is not None and result.error is not None
    assert "sequences.jsonl" in result.error.message and result.error.kind == "parity"


TOKENIZER = "benchmarks/results/live-h200/trained-model/target"


def _retrieval_ids(count: int) -> list[list[int]]:
    """The retrieval eval's first ``count`` distinct prompts, tokenized as SGLang's chat does.

    HF directly, over the eval's own file in its order (not the cell's limit); it stops at
    ``count``: tokenizing all 48 long prompts was half the test's time.
    """
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer

    from evals.base import make_eval
    from evals.eval_conf import EvalConf
    from tests.helpers.cells import REPO

    raw = OmegaConf.load(REPO / "conf/evals/synth_retrieval.yaml")["synth_retrieval"]
    conf = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(EvalConf), raw))
    assert isinstance(conf, EvalConf)
    tok = AutoTokenizer.from_pretrained(REPO / TOKENIZER)
    out: list[list[int]] = []
    for p in make_eval("synth_retrieval", conf).prompts():
        ids = list(
            tok.apply_chat_template(p.messages, add_generation_prompt=True, return_dict=False)
        )
        if ids not in out:
            out.append(ids)
        if len(out) == count:
            break
    return out


def test_eval_prompts_are_the_evals_own_whole(tmp_path):
    folder = tmp_path / "fa3"
    run = run_script(
        "mtp-eval", "backend=fa3", *PARITY[1:], "evals=[synth_retrieval]",
        f"model.tokenizer_path={TOKENIZER}", "parity.prompts=eval:synth_retrieval",
        "parity.sequences=3", "parity.new_tokens=4", f"output_dir={folder}",
        # the eval's first 4 of 48 rows (the cell tokenizes and asks each): one more than the
        # sequences, so a pool taken from other than the eval's first prompts still shows
        "evals.synth_retrieval.dataset.limit=4",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    rows = [
        json.loads(x) for x in (parity_dir(folder) / "sequences.jsonl").read_text().splitlines()
    ]
    assert [r["prompt_ids"] for r in rows] == _retrieval_ids(3)
    assert min(len(r["prompt_ids"]) for r in rows) > 1000  # whole, long retrieval prompts


def test_worst_sequences_link_to_their_questions(tmp_path):
    """parity.prompts=eval:NAME: each sequence names its question; the HTML links it there."""
    common = [
        *PARITY[1:], "evals=[synth_mcq]", f"model.tokenizer_path={TOKENIZER}",
        "parity.prompts=eval:synth_mcq", "parity.sequences=6", "parity.new_tokens=8",
        # 8 of synth_mcq's 180 questions: the 6 sequences' and two more, asked in each of the 3
        # cells and shown in the report's questions view (180 of them were most of the test)
        "evals.synth_mcq.dataset.limit=8",
    ]  # fmt: skip
    run = run_script("mtp-eval", "backend=fa3", *common, f"output_dir={tmp_path}/fa3")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    source = f"parity.sequences_from={tmp_path}/fa3"
    run = run_script("mtp-eval", "-m", "backend=fa3_repeat,fmha_v2", *common, source,
                     f"hydra.sweep.dir={tmp_path}/s")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    rows = [json.loads(x) for x in (parity_dir(tmp_path / "fa3") / "sequences.jsonl").open()]
    samples = [json.loads(x) for x in (tmp_path / "fa3" / "samples" / "synth_mcq.jsonl").open()]
    asked = {s["question_id"]: s["question"]["text"] for s in samples if s["repeat"] == 0}
    assert all(r["eval"] == "synth_mcq" and r["question_id"] in asked for r in rows)
    report = run_script("mtp-eval-report", str(tmp_path), "--out", str(tmp_path / "r"))
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    page = (tmp_path / "r" / "report.html").read_text()
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    (entry,) = [
        e for e in summary["parity"] if e["variant"] == "fmha_v2" and e["path"] == "prefill"
    ]
    for worst in entry["worst"]:
        link = re.search(rf'<a href="#([^"]+)" title="its question">{worst["question"]}</a>', page)
        assert link is not None, worst
        row = page[page.index(f'<tr id="{link.group(1)}">') :]
        text = asked[worst["question_id"]]
        assert html.escape(text) in row[: row.index("</tr>")]
