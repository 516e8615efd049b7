"""Issue 41's long-context training stream and the EAGLE3 format arithmetic (pure parts)."""

from __future__ import annotations

import pytest

from benchmarks.live_h200 import eagle3_format as fmt
from benchmarks.live_h200 import longctx_stream as ls
from benchmarks.live_h200 import synth_train as st
from evals.longctx import final_items


def test_curriculum_starts_short_and_ends_at_32k_on_about_half_the_steps() -> None:
    steps = 1000
    lengths = [ls.row_length(s, steps, 0) for s in range(steps)]
    assert set(lengths[: int(ls.WARM * steps)]) == {2048}
    last = lengths[int((ls.WARM + 3 * ls.STAGE) * steps) + 1 :]  # once 32k is unlocked
    assert 0.4 < last.count(32768) / len(last) < 0.8
    assert set(lengths) == set(ls.LENGTHS)
    # A length appears only once unlocked: 32k first after WARM + 3 stages.
    first_32k = lengths.index(32768)
    assert first_32k >= int((ls.WARM + 3 * ls.STAGE) * steps) - 1


@pytest.mark.parametrize("step", [0, 400, 999])
def test_rows_are_full_reproducible_and_carry_loss_on_replies_only(step: int) -> None:
    rows = ls.batch_rows(step, 1000, 3, 65536)
    again = ls.batch_rows(step, 1000, 3, 65536)
    assert [r.ids for r in rows] == [r.ids for r in again]
    length = ls.row_length(step, 1000, 3)
    assert len(rows) == 65536 // length
    for row in rows:
        assert len(row.ids) == len(row.loss) == len(row.task) == length
        assert all((t >= 0) == flag for t, flag in zip(row.task, row.loss, strict=True))
    # The long-context replies (task index LONG_TASK) are the graded answer form.
    long_ids = [i for r in rows for i, t in zip(r.ids, r.task, strict=True) if t == ls.LONG_TASK]
    text = bytes(i for i in long_ids if i < 256).decode()
    if long_ids:
        assert final_items(text) is not None


def test_held_out_questions_never_enter_a_row() -> None:
    # A step whose first row opens with a synthetic chat (most open with a long question).
    def opens_short(step: int) -> bool:
        first_reply = next(t for t in ls.batch_rows(step, 1000, 0, 8192)[0].task if t >= 0)
        return first_reply != ls.LONG_TASK

    step = next(s for s in range(50) if opens_short(s))
    rows = ls.batch_rows(step, 1000, 0, 8192)
    held = frozenset(bytes(i for i in rows[0].ids[1:400] if i < 256).decode().split("\n")[1:2])
    text = bytes(i for i in rows[0].ids if i < 256).decode(errors="replace")
    assert held and next(iter(held)) in text
    rows = ls.batch_rows(step, 1000, 0, 8192, held_out=held)
    assert not any(q in bytes(i for i in r.ids if i < 256).decode(errors="replace")
                   for r in rows for q in held)  # fmt: skip


def test_rows_under_600_tokens_fall_back_to_synthetic_chats() -> None:
    # what the draft's short rows train on; the target's CPU preset once capped its rows at 512
    # too, and so trained no long-context question at all
    rows = ls.batch_rows(0, 1000, 0, 2048, max_len=512)
    assert all(len(r.ids) == 512 and any(r.loss) and ls.LONG_TASK not in r.task for r in rows)


def test_the_cpu_preset_s_rows_hold_long_context_questions() -> None:
    from benchmarks.live_h200.train_longctx import CPU_ROW_TOKENS

    rows = [r for step in range(6) for r in ls.batch_rows(step, 1000, 0, 2048,
                                                         max_len=CPU_ROW_TOKENS)]  # fmt: skip
    assert all(len(r.ids) == CPU_ROW_TOKENS and any(r.loss) for r in rows)
    assert sum(ls.LONG_TASK in r.task for r in rows) >= len(rows) // 3


def test_aux_layers_give_sglangs_default_capture() -> None:
    for layers in (4, 8, 32):
        ids = fmt.aux_layer_ids(layers)
        # llama.py 936: [2, L // 2, L - 3] when no ids are given; ids + 1 otherwise (941).
        assert fmt.captured_hidden_states(ids) == [2, layers // 2, layers - 3]
    with pytest.raises(ValueError, match="at least 4 layers"):
        fmt.aux_layer_ids(3)


def test_token_maps() -> None:
    d2t, t2d = fmt.token_maps([1] * 264, 264)
    assert d2t == [0] * 264 and all(t2d)
    d2t, t2d = fmt.token_maps([5, 0, 9, 9, 1], 3)
    hot = [d + i for i, d in enumerate(d2t)]
    assert hot == [0, 2, 3] and t2d == [True, False, True, True, False]
    with pytest.raises(ValueError, match="draft_vocab_size 6"):
        fmt.token_maps([1] * 5, 6)


def test_chain_steps() -> None:
    c = 13  # 12 tokens after the prefill's
    assert fmt.chain_steps([[True] * c] * 3) == 3  # 4 tokens a step
    assert fmt.chain_steps([[False] * c] * 3) == 12  # the target's own token only
    # First step: drafts 1 and 2 match, 3 misses -> 3 tokens; then nothing matches.
    matches = [[True] + [False] * (c - 1), [True] + [False] * (c - 1), [False] * c]
    assert fmt.chain_steps(matches) == 1 + (12 - 3)


def test_draft_config_carries_the_targets_rope_and_vocabulary() -> None:
    rope = {"rope_type": "llama3", "rope_theta": 5e5, "factor": 4.0}
    target = {"num_hidden_layers": 8, "hidden_size": 512, "vocab_size": st.VOCAB_SIZE,
              "rope_parameters": rope, "rope_scaling": rope, "rope_theta": 5e5,
              "max_position_embeddings": 131072}  # fmt: skip
    arch = fmt.DraftArch(512, 1536, 4, 2, 128)
    config = fmt.draft_config(target, arch, st.VOCAB_SIZE)
    assert config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert config["rope_parameters"] == rope and config["max_position_embeddings"] == 131072
    shapes = fmt.expected_tensors(config)
    assert shapes["fc.weight"] == ([512, 3 * 512], "BF16")
    assert shapes["layers.0.self_attn.q_proj.weight"] == ([512, 1024], "BF16")
    assert shapes["d2t"] == ([st.VOCAB_SIZE], "I64") and shapes["t2d"] == ([264], "BOOL")


def test_the_default_mix_is_the_committed_recipe_to_the_byte() -> None:
    # The stream of longctx-model-worked-0.5.23 (digest taken before Mix existed): its recipe
    # stays reproducible whatever Mix adds.
    import hashlib

    def rows(*mix: ls.Mix) -> list[st.Row]:
        return [r for step in (0, 1500, 2700)
                for r in ls.batch_rows(step, 2800, 0, 16384, frozenset(), 4096, *mix)]  # fmt: skip

    whole = hashlib.sha256()
    for row in rows():
        whole.update(str(row.ids).encode())
    assert whole.hexdigest()[:16] == "07d37cb2a91705d7"
    assert [r.ids for r in rows(ls.Mix())] == [r.ids for r in rows()]


def test_a_multi_needle_weight_draws_those_tasks_more_often() -> None:
    import random

    def share(mix: ls.Mix) -> float:
        rng = random.Random(0)
        tasks = [mix.task(rng) for _ in range(6000)]
        return sum(t in ls.MULTI_NEEDLE for t in tasks) / len(tasks)

    assert 0.45 < share(ls.Mix()) < 0.55  # 3 of 6 tasks
    assert 0.70 < share(ls.Mix(multi_needle_weight=3.0)) < 0.80  # 9 of 12


def test_confusable_questions_differ_in_one_word_of_their_keys() -> None:
    import random

    from evals.longctx_tasks import confusable_keys, sample
    from evals.longctx_tokens import ByteCounter

    for seed in range(50):
        first, *others = confusable_keys(random.Random(seed), 4)
        assert len({first, *others}) == 4
        adjective, noun = first.split("-", 1)
        assert all(k.startswith(f"{adjective}-") or k.endswith(f"-{noun}") for k in others)
    s = sample("niah_multikey", 4096, 1000, 7, ByteCounter(), confusable=True)
    asked = s.evidence[0].split(" for ", 1)[1].split(" is:", 1)[0]
    keys = [ln.split(" for ", 1)[1].split(" is:", 1)[0] for ln in s.text.splitlines()
            if ln.startswith("One of the special magic numbers for ")]  # fmt: skip
    assert len(keys) == 4 and asked in keys
    adjective, noun = asked.split("-", 1)
    assert all(k.startswith(f"{adjective}-") or k.endswith(f"-{noun}") for k in keys if k != asked)
    assert s.gold[0] in s.evidence[0] and f"for {asked}" in s.text.splitlines()[-1]
    # the eval's questions never draw them: the same question without the flag is another
    plain = sample("niah_multikey", 4096, 1000, 7, ByteCounter())
    assert plain.text != s.text


@pytest.mark.parametrize(
    ("task", "count"),
    [("niah_multikey", 3), ("niah_multiquery", 4), ("vt", 1), ("niah_single", 0),
     ("niah_multivalue", 0), ("fwe", 0)],
)  # fmt: skip
def test_follow_ups_ask_the_other_keys_of_the_same_haystack(task: str, count: int) -> None:
    import random

    from benchmarks.live_h200.longctx_followups import follow_ups
    from benchmarks.live_h200.reply_copy import Copy, reply_copy
    from evals.longctx import is_correct
    from evals.longctx_tasks import HOPS, sample
    from evals.longctx_tokens import ByteCounter

    s = sample(task, 4096, 1000, 11, ByteCounter())
    turns = follow_ups(s, random.Random(0), 9)
    assert len(turns) == 2 * count
    assert follow_ups(s, random.Random(0), 2) == turns[:4]  # the cap keeps rng's order
    assert follow_ups(s, random.Random(0), 0) == []
    asked = {t["content"] for t in turns[0::2]}
    assert len(asked) == count and not any(q == s.text.splitlines()[-1] for q in asked)
    for question, reply in zip(turns[0::2], turns[1::2], strict=True):
        assert question["role"] == "user" and reply["role"] == "assistant"
        quoted = reply["content"].splitlines()[:-1]
        # Every quoted line is a hidden line of the prompt, and the answer is what they give.
        assert reply_copy(s.text, tuple(quoted), reply["content"]) == Copy(
            exact=len(quoted), evidence=len(quoted)
        )
        gold = tuple(ln.rstrip(".").split()[-1] for ln in quoted)
        if task == "vt":
            assert len(quoted) == HOPS + 1 and set(quoted).isdisjoint(s.evidence)
            gold = tuple(ln.split()[1] for ln in quoted)
        assert is_correct(final_items(reply["content"]), gold, False)


def test_rows_with_follow_ups_stay_their_length_and_supervise_more_retrieval() -> None:
    def long_tokens(mix: ls.Mix) -> int:
        total = 0
        for step in range(1200, 2800, 160):  # past the 2k warm-up: rows of 4k-32k
            rows = ls.batch_rows(step, 2800, 0, 65536, mix=mix)
            length = ls.row_length(step, 2800, 0)
            assert all(len(r.ids) == len(r.loss) == len(r.task) == length for r in rows)
            total += sum(t == ls.LONG_TASK for r in rows for t in r.task)
        return total

    # Measured over the whole run: +47% retrieval answer tokens at 4k rows, +93% at 16k and 32k.
    assert long_tokens(ls.Mix(3.0, 0.5, follow_ups=3)) > 1.3 * long_tokens(ls.Mix(3.0, 0.5))
