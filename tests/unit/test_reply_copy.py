"""The long-context eval's copy diagnosis (benchmarks/live_h200/reply_copy.py), table-driven."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.live_h200.longctx_eval import length_lines, summarize
from benchmarks.live_h200.reply_copy import Copy, copy_shares, reply_copy, reread
from evals.longctx_tasks import TASKS, sample, worked_reply
from evals.longctx_tokens import ByteCounter

NEEDLE = "One of the special magic numbers for {} is: {}."
PROMPT = "\n".join(["Intro.", NEEDLE.format("pale-pebble", "111"), "The owl sings.",
                    NEEDLE.format("pale-river", "222"), "Question?"])  # fmt: skip
EVIDENCE = (NEEDLE.format("pale-pebble", "111"),)
WORKED_4K = Path("benchmarks/results/live-h200/longctx-model-worked-0.5.23/cpu-hf-eval-4k.json")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (NEEDLE.format("pale-pebble", "111") + "\nThe final answer is 111.", Copy(exact=1)),
        (NEEDLE.format("pale-river", "222") + "\nThe final answer is 222.", Copy(distractor=1)),
        (NEEDLE.format("pale-river", "111"), Copy(mismatched=1)),
        (NEEDLE.format("pink-pebble", "111"), Copy(garbled_key=1)),
        (NEEDLE.format("pink-pebble", "222"), Copy(garbled_distractor=1)),
        (NEEDLE.format("pale-pebble", "999"), Copy(invented=1)),
        ("The final answer is 111.", Copy()),  # a bare answer quotes nothing
        ("", Copy()),
        # Each line on its own; blank lines and surrounding spaces are not lines.
        (
            f"  {EVIDENCE[0]}  \n\n{EVIDENCE[0]}\nThe owl sings.",
            Copy(exact=1, repeated=1, distractor=1),
        ),
        # A wrong line quoted twice is repeated the second time too: one lookup, written twice.
        ("\n".join([NEEDLE.format("pink-pebble", "111")] * 3), Copy(garbled_key=1, repeated=2)),
    ],
)
def test_each_quoted_line_is_sorted_by_what_it_copied(reply: str, expected: Copy) -> None:
    got = reply_copy(PROMPT, EVIDENCE, reply)
    assert got == Copy(**{**expected.__dict__, "evidence": 1})


@pytest.mark.parametrize("task", TASKS)
def test_the_training_reply_copies_every_evidence_line_exactly(task: str) -> None:
    s = sample(task, 2048, 1000, 7, ByteCounter())
    got = reply_copy(s.text, s.evidence, worked_reply(s))
    assert got == Copy(exact=len(s.evidence), evidence=len(s.evidence))
    assert copy_shares([got])["evidence_copied"] == (1.0 if s.evidence else 0.0)


def test_shares_are_of_the_quoted_lines_and_recall_of_the_evidence() -> None:
    shares = copy_shares([Copy(exact=1, repeated=1, garbled_key=1, evidence=4),
                          Copy(invented=1, evidence=4)])  # fmt: skip
    assert shares == {"evidence_copied": 0.125, "repeated": 0.25, "distractor": 0.0,
                      "mismatched": 0.0, "garbled_key": 0.25, "garbled_distractor": 0.0,
                      "invented": 0.25, "quoted": 4}  # fmt: skip
    assert copy_shares([])["quoted"] == 0  # nothing quoted: shares of 0, not a division error


def worked_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = reread(json.loads(WORKED_4K.read_text())["rows"])
    return rows


def test_the_2026_12_06_model_s_replies_read_as_the_cpu_study_read_them_by_hand() -> None:
    # cpu-study/README.md: keys garbled even for one needle, multi-key numbers from distractors,
    # one number repeated under the multi-query keys. The retrain is judged against this.
    copy = summarize(worked_rows())["copy_per_task_length"]
    single, multikey = copy["niah_single"]["4096"], copy["niah_multikey"]["4096"]
    assert 0 < single["garbled_key"] < 0.5 and single["evidence_copied"] > 0.5
    assert multikey["garbled_distractor"] > 0.5 and multikey["evidence_copied"] < 0.25
    assert copy["niah_multiquery"]["4096"]["evidence_copied"] < 0.25
    assert copy["vt"]["4096"]["invented"] > 0.5
    assert copy["fwe"]["4096"]["quoted"] == 0  # counting has no line to quote


def test_the_eval_log_names_each_task_s_accuracy_and_copies_per_length() -> None:
    lines = length_lines(summarize(worked_rows()), 4096)
    assert lines[0].startswith("[eval] 4096: {")
    assert len(lines) == 1 + len(TASKS)
    single = next(ln for ln in lines if " niah_single:" in ln)
    assert single.startswith("[eval] 4096 niah_single: accuracy 1.0 copy {")
    assert json.loads(single.split(" copy ", 1)[1])["quoted"] == 6
