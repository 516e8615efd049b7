"""The synthetic tasks, their bundled eval files and the graders' view of the taught answers."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.live_h200 import synth_data, synth_tasks
from benchmarks.live_h200.synth_train import encode_chat
from evals.base import make_eval
from evals.datasets import DATA_DIR
from evals.eval_conf import DatasetConf, EvalConf
from evals.gpqa import LETTERS
from evals.gsm8k import format_prompt

REPO = Path(__file__).resolve().parents[2]

MODEL = REPO / "benchmarks/results/live-h200/trained-model"
STEP = re.compile(r"^(\d+) ([-+x]) (\d+) = (\d+)\.$")
OPS = {"+": int.__add__, "-": int.__sub__, "x": int.__mul__}


def check_steps(working: str) -> list[int]:
    """Every ``a op b = c.`` line of a worked answer is right; returns the results."""
    results = []
    for line in working.splitlines():
        match = STEP.match(line)
        if match:
            a, op, b, c = match.groups()
            assert OPS[op](int(a), int(b)) == int(c), line
            results.append(int(c))
    return results


@pytest.mark.parametrize("level", sorted(synth_tasks.ARITH_LEVELS))
def test_arith_working_is_right_and_never_negative(level: int) -> None:
    rng = random.Random(level)
    steps = synth_tasks.ARITH_LEVELS[level][0]
    for _ in range(200):
        ex = synth_tasks.arith_example(rng, level)
        results = check_steps(ex.working)
        assert len(results) == steps and results[-1] == int(ex.gold)
        assert min(results) >= 0
        assert ex.question.endswith("have now?")


@pytest.mark.parametrize("level", sorted(synth_tasks.MCQ_LEVELS))
def test_mcq_working_distractors_and_the_one_twin(level: int) -> None:
    rng = random.Random(level)
    for _ in range(200):
        ex = synth_tasks.mcq_example(rng, level)
        a, b = map(int, re.findall(r"\d+", ex.question))
        check_steps(ex.working)
        assert ex.working.endswith(f"The answer is {a * b}.") and ex.gold == str(a * b)
        options = [ex.gold, *ex.distractors]
        assert len(set(options)) == 4 and all(int(o) > 0 for o in options)
        # exactly one distractor ends in the gold's last digit; the other three last digits differ
        assert [o[-1] for o in ex.distractors].count(ex.gold[-1]) == 1
        assert len({o[-1] for o in options}) == 3


def test_retrieval_gold_is_the_keyed_line_and_keys_are_unique() -> None:
    rng = random.Random(0)
    for chars in (500, 4000):
        ex = synth_tasks.retrieval_example(rng, chars)
        lines = ex.question.splitlines()[1:-1]
        names = [re.split("[:=]", line)[0] for line in lines]
        assert len(names) == len(set(names))
        keyed = [line for line in lines if "=" in line]
        assert len(keyed) == synth_tasks.EVAL_KEYS
        key = ex.question.rsplit(" ", 1)[-1].rstrip("?")
        assert f"{key}={ex.gold}" in keyed and ex.working == f"{key}={ex.gold}"
        assert abs(len(ex.question) - chars) < 60


def test_bundled_files_are_what_the_code_writes() -> None:
    assert synth_data.main(["--check"]) == 0


def test_bundled_files_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    # A set of codes iterated in hash order once made the retrieval file differ per process.
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    script = "benchmarks.live_h200.synth_data"
    subprocess.run([sys.executable, "-m", script, "--dir", str(tmp_path)], cwd=REPO, env=env,
                   check=True, capture_output=True)  # fmt: skip
    for name in synth_data.FILES.values():
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name


def test_retrieval_prompts_run_from_4k_to_over_16k_tokens() -> None:
    rows = [json.loads(line) for line in (DATA_DIR / "synth_retrieval.jsonl").open()]
    tokens = {}
    for row in rows:
        ids, _ = encode_chat([{"role": "user", "content": format_prompt(row["question"])}], True)
        tokens.setdefault(row["level"], []).append(len(ids))
    assert sorted(tokens) == list(synth_data.RETRIEVAL_PROMPT_TOKENS)
    for level, counts in tokens.items():
        assert all(abs(n - level) <= 8 for n in counts), (level, counts)
    assert min(min(c) for c in tokens.values()) >= 4080 and max(map(max, tokens.values())) > 16384


def make(name: str, kind: str, path: str):
    return make_eval(name, EvalConf(kind=kind, dataset=DatasetConf(source="bundled", path=path)))


@pytest.mark.parametrize("name", ["synth_arith", "synth_retrieval"])
def test_the_taught_numeric_answer_grades_correct_and_a_wrong_one_does_not(name: str) -> None:
    ev = make(name, "gsm8k", synth_data.FILES[name.split("_")[1]])
    rows = {r["question"]: r for r in (json.loads(x) for x in (DATA_DIR / f"{name}.jsonl").open())}
    for prompt in ev.prompts()[:40]:
        question = prompt.messages[0]["content"].split("Problem: ", 1)[1].rsplit("\nYour", 1)[0]
        working, gold = rows[question]["answer"].rsplit("\n#### ", 1)
        ex = synth_tasks.Example(question, working, gold)
        assert ev.grade(prompt, synth_tasks.numeric_response(ex)) == (gold, True)
        wrong = synth_tasks.Example(question, working, str(int(gold) + 1))
        assert ev.grade(prompt, synth_tasks.numeric_response(wrong))[1] is False


def test_the_taught_mcq_answer_names_the_value_then_the_shuffled_letter() -> None:
    ev = make("synth_mcq", "gpqa", "synth_mcq.csv")
    for prompt in ev.prompts():
        question = ev.questions[[q["id"] for q in ev.questions].index(prompt.question_id)]
        options = [question["choices"][i] for i in prompt.meta["permutation"]]
        ex = synth_tasks.Example(question["question"], "", question["choices"][0],
                                 tuple(question["choices"][1:]))  # fmt: skip
        text = synth_tasks.mcq_response(ex, options)
        assert ev.grade(prompt, text) == (prompt.answer, True)
        assert f"So {ex.gold}={prompt.answer}." in text
        assert [line.split("=")[1] for line in text.splitlines()[1:5]] == list(LETTERS)


def test_committed_weights_match_their_checksums() -> None:
    sums = (MODEL / "SHA256SUMS").read_text().split("\n")
    checked = 0
    for line in filter(None, sums):
        digest, name = line.split()
        assert hashlib.sha256((MODEL / name).read_bytes()).hexdigest() == digest, name
        checked += 1
    recipe = json.loads((MODEL / "recipe.json").read_text())
    assert recipe["seed"] == 0 and "--seed 0" in recipe["command"]
    assert recipe["target"]["sha256"]["model.safetensors"] in (MODEL / "SHA256SUMS").read_text()
    assert checked == 12
    config = json.loads((MODEL / "target/config.json").read_text())
    # SGLang's transformers (5.12.1) must read the same RoPE base as the one trained with.
    assert config["rope_theta"] == config["rope_parameters"]["rope_theta"] == 100000.0
