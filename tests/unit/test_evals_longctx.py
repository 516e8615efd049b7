"""The generated long-context eval: lengths in the model's tokens, determinism, exact grades."""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path

import pytest

from evals.base import make_eval
from evals.eval_conf import DatasetConf, EvalConf, LongCtxConf
from evals.longctx import LongCtxEval, context_refusals, final_items, is_correct, overlong
from evals.longctx_cache import cache_key, cached_samples
from evals.longctx_tasks import TASKS, reply_text, sample, worked_reply
from evals.longctx_tokens import ByteCounter, SimCounter, TokenCounter, counter_for
from pipeline.config.checks import ConfigError
from pipeline.simserver.model import AnswerIndex, hash_units, plan_completion
from pipeline.simserver.simconfig import AnswerEntry
from tests.helpers.cells import compose_conf

SYNTH_TOKENIZER = Path(__file__).parents[2] / "benchmarks/results/live-h200/trained-model/target"
COUNTERS: list[TokenCounter] = [SimCounter(), ByteCounter()]


def _conf(task: str, lengths: list[int], samples: int = 2, tokens: str = "sim") -> EvalConf:
    node = LongCtxConf(task=task, lengths=lengths, samples=samples, tokens=tokens)
    return EvalConf(kind="longctx", dataset=DatasetConf(source="generated", path="longctx"),
                    longctx=node)  # fmt: skip


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("length", [700, 2048, 5000])
def test_a_prompt_fills_its_length_from_below_within_one_unit(counter, task, length):
    s = sample(task, length, 3, 1, counter)
    assert s.tokens == counter.chat(s.text)
    unit = 12 if counter.name == "sim" else 80  # a filler sentence or a line of coded words
    assert length - unit <= s.tokens <= length


@pytest.mark.parametrize("task", TASKS)
def test_a_question_is_a_function_of_seed_task_length_and_index(task):
    one = sample(task, 1500, 7, 2, SimCounter())
    assert one == sample(task, 1500, 7, 2, SimCounter())
    others = [sample(task, 1500, 8, 2, SimCounter()), sample(task, 1500, 7, 3, SimCounter())]
    assert all(o.text != one.text and o.gold != one.gold for o in others)


@pytest.mark.parametrize("task", ["niah_single", "niah_multikey", "niah_multivalue",
                                  "niah_multiquery"])  # fmt: skip
def test_every_needle_asked_for_is_in_the_haystack_once(task):
    s = sample(task, 3000, 0, 0, SimCounter())
    lines = s.text.splitlines()
    for value in s.gold:
        assert sum(value in line for line in lines) == 1
    assert len(s.gold) == (1 if task in ("niah_single", "niah_multikey") else 4)
    assert s.ordered == (task == "niah_multiquery")


def test_variable_tracking_gold_is_the_chain_that_holds_the_asked_value():
    s = sample("vt", 3000, 0, 0, SimCounter())
    value = s.text.split("assigned the value ")[1].split()[0]
    holds = {value}
    for line in s.text.splitlines():  # follow the assignments in text order
        if line.startswith("VAR "):
            name, source = line[4:].rstrip(".").split(" = ")
            if source.removeprefix("VAR ") in holds:
                holds.add(name)
    assert holds - {value} == set(s.gold)


def test_frequent_words_gold_is_the_top_three_counted_in_the_text():
    s = sample("fwe", 3000, 0, 0, SimCounter())
    body = s.text.splitlines()[1:-1]
    counts = collections.Counter(w for line in body for w in line.split()).most_common(4)
    assert {w for w, _ in counts[:3]} == set(s.gold)
    assert counts[2][1] > counts[3][1]


@pytest.mark.parametrize(
    ("content", "gold", "ordered", "right"),
    [
        ("The final answer is 4829173.", ("4829173",), False, True),
        ("the final answer is **4829173**", ("4829173",), False, True),
        ("The final answer is 4829174.", ("4829173",), False, False),
        ("4829173", ("4829173",), False, False),  # no anchor: not graded right
        (None, ("4829173",), False, False),
        (
            "The final answer is 1, 2, 4.\nThe final answer is 3, 1, 2.",
            ("1", "2", "3"),
            False,
            True,
        ),
        ("The final answer is 3, 1, 2", ("1", "2", "3"), True, False),  # order asked
        ("The final answer is 1, 2 and 3", ("1", "2", "3"), True, True),
        ("The final answer is 1, 2", ("1", "2", "3"), False, False),  # one missing
        ("The final answer is 1, 2, 3, 4", ("1", "2", "3"), False, False),  # one extra
        ("The final answer is 1, 1, 2", ("1", "2", "3"), False, False),
        ("The final answer is QWERT, ASDFG.\nMore text", ("ASDFG", "QWERT"), False, True),
    ],
)
def test_grading_is_exact(content, gold, ordered, right):
    assert is_correct(final_items(content), gold, ordered) is right


@pytest.mark.parametrize("task", TASKS)
def test_the_reply_a_model_is_taught_is_graded_right_and_the_simulated_server_finds_it(task):
    ev = make_eval("x", _conf(task, [800, 1600], samples=3))
    assert isinstance(ev, LongCtxEval)
    key = ev.answer_key()
    index = AnswerIndex([AnswerEntry(e["question"], e["answer"], e["kind"]) for e in key])
    for prompt, (text, reply) in zip(ev.prompts(), ev.training_text(), strict=True):
        assert ev.grade(prompt, reply) == (prompt.answer, True)
        for accuracy, right in ((1.0, True), (0.0, False)):
            served = plan_completion(index, text, hash_units("0", text), accuracy, 40, None)
            assert ev.grade(prompt, "".join(served.tokens))[1] is right
    assert len({p.question_id for p in ev.prompts()}) == len(ev.prompts())
    assert [p.meta["length"] for p in ev.prompts()] == [800] * 3 + [1600] * 3


def test_reply_text_names_every_gold_item():
    s = sample("niah_multiquery", 1000, 0, 0, SimCounter())
    assert reply_text(s) == f"The final answer is {', '.join(s.gold)}."


@pytest.mark.parametrize(("task", "quoted"), [("niah_single", 1), ("niah_multikey", 1),
                                             ("niah_multivalue", 4), ("niah_multiquery", 4),
                                             ("vt", 5), ("fwe", 0)])  # fmt: skip
def test_the_worked_reply_quotes_the_prompts_own_evidence_lines_then_answers(task, quoted):
    s = sample(task, 1500, 0, 3, SimCounter())
    lines = worked_reply(s).split("\n")
    prompt_lines = set(s.text.split("\n"))
    assert len(lines) == quoted + 1 and all(line in prompt_lines for line in lines[:-1])
    assert lines[-1] == reply_text(s) and final_items(worked_reply(s)) == s.gold
    if task.startswith("niah"):  # each quoted needle holds its gold number, in the answer's order
        assert [line.rsplit(" ", 1)[1] for line in lines[:-1]] == [f"{g}." for g in s.gold]
    if task == "vt":  # the chain from the asked value, each hop naming the line before it
        value = s.text.split("assigned the value ", 1)[1].split(" ", 1)[0]
        assert lines[0] == f"VAR {s.gold[0]} = {value}."
        assert [line.split()[1] for line in lines[:-1]] == list(s.gold)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="no transformers")
def test_the_byte_count_is_synth_llamas_own_tokenizer():
    hf = counter_for("hf", "sglang", str(SYNTH_TOKENIZER))
    s = sample("niah_multikey", 2000, 0, 0, ByteCounter())
    assert hf.chat(s.text) == s.tokens
    assert hf.pieces(["abc: 47\n", "K=7"]) == ByteCounter().pieces(["abc: 47\n", "K=7"])


@pytest.mark.parametrize(
    ("tokens", "kind", "path", "name"),
    [("auto", "simulated", None, "sim"), ("sim", "sglang", None, "sim"),
     ("bytes", "sglang", None, "bytes")],
)  # fmt: skip
def test_auto_counts_as_the_simulated_server_does_there(tokens, kind, path, name):
    assert counter_for(tokens, kind, path).name == name


@pytest.mark.parametrize(
    ("tokens", "kind", "path", "says"),
    [("words", "simulated", None, "longctx.tokens='words' is unknown"),
     ("auto", "sglang", None, "model.tokenizer_path"),
     ("hf", "simulated", "/nonexistent/folder", "not a local folder")],
)  # fmt: skip
def test_a_counter_that_cannot_be_made_names_the_fix(tokens, kind, path, says):
    with pytest.raises(ValueError) as err:
        counter_for(tokens, kind, path)
    assert says in str(err.value)


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match=r"evals\.x\.longctx: lengths"):
        make_eval("x", _conf("vt", []))
    with pytest.raises(ValueError, match=r"longctx\.task='ruler' is unknown"):
        make_eval("x", _conf("ruler", [1000]))


@pytest.mark.parametrize(
    ("lengths", "context", "budget", "refused"),
    [([4096, 8192], 8192 + 400, 400, None), ([4096, 8192], 8191 + 400, 400, [8192]),
     ([4096, 131072], 32768, 2048, [131072])],
)  # fmt: skip
def test_a_length_the_context_cannot_hold_is_refused_naming_eval_length_and_fix(
    lengths, context, budget, refused
):
    line = overlong("longctx_vt", lengths, context, budget)
    if refused is None:
        assert line is None
        return
    assert line is not None
    assert "evals.longctx_vt" in line and f"{refused[-1]:,} tokens" in line
    assert f"model.context_length={refused[-1] + budget}" in line
    assert f"evals.longctx_vt.longctx.lengths=[{lengths[0]}]" in line


def test_context_refusals_read_only_long_context_evals():
    ev = make_eval("lc", _conf("niah_single", [900, 1800], samples=1))
    assert context_refusals({"lc": ev}, 2000, {"lc": 100}) == []
    assert "evals.lc" in context_refusals({"lc": ev}, 1500, {"lc": 100})[0]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MTP_EVAL_CACHE", str(tmp_path / "cache"))


def test_a_second_cell_reads_the_questions_the_first_generated(tmp_path):
    first = make_eval("x", _conf("vt", [700, 900]))
    kept = list((tmp_path / "cache" / "longctx").iterdir())
    assert len(kept) == 1
    made: list[int] = []
    parts = {"task": "vt", "lengths": [700, 900], "samples": 2, "seed": 0, "counter": "sim"}
    again = cached_samples(parts, lambda: made.append(1) or [], kept[0].parent)
    assert made == [] and again == first.samples  # type: ignore[attr-defined]
    kept[0].write_bytes(b"not gzip")  # an unreadable file is generated again and replaced
    assert make_eval("x", _conf("vt", [700, 900])).samples == first.samples  # type: ignore[attr-defined]
    assert make_eval("x", _conf("vt", [700, 900])).prompts() == first.prompts()


@pytest.mark.parametrize(
    "change",
    [{"counter": "bytes"}, {"seed": 1}, {"lengths": [700]}, {"samples": 3}, {"task": "fwe"}],
)
def test_the_cache_key_changes_with_everything_the_questions_depend_on(change):
    parts = {"task": "vt", "lengths": [700, 900], "samples": 2, "seed": 0, "counter": "sim"}
    assert cache_key(parts) != cache_key({**parts, **change})
    assert cache_key(parts) == cache_key(dict(parts))


@pytest.mark.parametrize(("context", "refused"), [(4096 + 2048, False), (4095 + 2048, True)])
def test_a_model_context_length_too_short_is_refused_when_the_config_is_read(context, refused):
    overrides = ["evals=[longctx]", f"model.context_length={context}",
                 "evals.longctx_niah_single.longctx.lengths=[1024,4096]"]  # fmt: skip
    if not refused:
        assert compose_conf(overrides).model.context_length == context
        return
    with pytest.raises(ConfigError) as err:
        compose_conf(overrides)
    assert "evals.longctx_fwe: prompts of up to 4,096 tokens plus 2048 answer tokens" in str(
        err.value
    )


def _bpe_folder(folder: Path) -> str:
    """A small byte-level BPE tokenizer with a chat template, trained on the haystack's words."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    text = [sample(t, 600, 9, 0, SimCounter()).text for t in TASKS]
    bpe.train_from_iterator(text, trainers.BpeTrainer(vocab_size=600, special_tokens=["<s>"]))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>")
    tok.chat_template = (
        "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    )
    tok.save_pretrained(folder)
    return str(folder)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="no transformers")
@pytest.mark.parametrize("task", TASKS)
def test_a_bpe_tokenizer_fills_the_length_from_below(task, tmp_path):
    counter = counter_for("auto", "sglang", _bpe_folder(tmp_path / "tok"))
    assert counter.name == "hf" and counter.identity.startswith("hf:")
    s = sample(task, 2500, 1, 0, counter)
    assert s.tokens == counter.chat(s.text)
    assert 2500 - 60 <= s.tokens <= 2500
