from __future__ import annotations

import pytest

from backends.backend_conf import BackendConf
from backends.compat import Finding, is_runnable, outcome_of
from backends.compat_rules import RULES
from tests.helpers.compat_cells import MTP, Cell

FA4 = BackendConf(name="fa4", attention_backend="fa4")
DECODE_TRTLLM = BackendConf(
    name="x",
    attention_backend=None,
    prefill_attention_backend="flashinfer",
    decode_attention_backend="trtllm_mha",
)
MHA = (8, 8, 128, None)
NO_BUFFER = ["--mamba-radix-cache-strategy", "no_buffer"]
RAGGED = {"SGLANG_RAGGED_VERIFY_MODE": "compact"}
DSPARK = ("DSPARK", 3, 1, 4)


# (rule id, SGLang version range the case targets, a cell that triggers it, a cell that does not)
CASES = [
    (
        "spec_params_without_num_steps",
        Cell(spec=("EAGLE", None, 1, None)),
        Cell(spec=("EAGLE", None, None, None)),
    ),
    ("spec_chain_draft_tokens", Cell(spec=("EAGLE", 3, 1, 8)), Cell(spec=MTP)),
    ("spec_tree_draft_tokens_limit", Cell(spec=("EAGLE", 2, 2, 6)), Cell(spec=("EAGLE", 2, 2, 5))),
    (
        "spec_max_running_requests_48",
        Cell(spec=MTP, max_running=None),
        Cell(spec=MTP, max_running=64),
    ),
    (
        "spec_max_running_requests_48",
        Cell(spec=MTP, max_running=None),
        Cell(spec=MTP, max_running=None, extra=["--max-running-requests", "96"]),
    ),
    (
        "trtllm_mha_page_size",
        Cell("trtllm_mha", "SM100", page=1),
        Cell("trtllm_mha", "SM100", page=32),
    ),
    (
        "trtllm_mha_page_size",
        Cell("fmha_v2", "SM90", page=256),
        Cell("flashinfer", "SM90", page=256),
    ),
    ("fa3_fp8_e5m2_to_triton", Cell("fa3", kv="fp8_e5m2"), Cell("fa3", kv="fp8_e4m3")),
    (
        "trtllm_mha_prefill_gpu",
        Cell("fmha_v2", "SM90", "0.5.17"),
        Cell("fmha_v2", "SM100", "0.5.17"),
    ),
    (
        "trtllm_mha_prefill_gpu",
        Cell("fmha_v2", "SM89", "0.5.19"),
        Cell("fmha_v2", "SM120", "0.5.19"),
    ),
    (
        "trtllm_mha_sm120_fp8_or_prefill_skip_softmax",
        Cell("fmha_v2", "SM120", kv="fp8_e4m3"),
        Cell("fmha_v2", "SM120", kv="bf16"),
    ),
    (
        "trtllm_mha_sm120_fp8_or_prefill_skip_softmax",
        Cell("fmha_v2", "SM120", skip=(0.5, None)),
        Cell("fmha_v2", "SM120", skip=(0.0, 0.5)),
    ),
    ("trtllm_mha_decode_gpu", Cell(DECODE_TRTLLM, "SM86"), Cell(DECODE_TRTLLM, "SM120")),
    (
        "trtllm_mha_prefill_context_parallel",
        Cell("fmha_v2", version="0.5.19", extra=["--enable-prefill-context-parallel"]),
        Cell("fmha_v2", version="0.5.20", extra=["--enable-prefill-context-parallel"]),
    ),
    (
        "trtllm_mha_prefill_context_parallel",
        Cell("fmha_v2", extra=["--attn-cp-size=2"]),
        Cell("fmha_v2", "SM100", extra=["--attn-cp-size", "2"]),
    ),
    (
        "trtllm_mha_spec_topk",
        Cell("trtllm_mha", "SM100", spec=("EAGLE", 3, 2, 6)),
        Cell("trtllm_mha", "SM100", spec=MTP),
    ),
    (
        "page_tree_spec_backends",
        Cell(FA4, "SM100", spec=("EAGLE", 3, 2, 6), page=64),
        Cell("flashinfer", "SM100", spec=("EAGLE", 3, 2, 6), page=64),
    ),
    (
        "deterministic_backend",
        Cell("fmha_v2", "SM100", extra=["--enable-deterministic-inference"]),
        Cell("fa3", "SM90", extra=["--enable-deterministic-inference"]),
    ),
    ("trtllm_mha_mla", Cell("trtllm_mha", "SM100", mla=True), Cell("trtllm_mha", "SM100")),
    ("fa3_gpu", Cell("fa3", "SM100"), Cell("fa3", "SM90")),
    ("fa3_gpu", Cell("fa3", "SM80", mla=True), Cell("fa3", "SM86")),
    (
        "xqa_spec_verify_mask",
        Cell("trtllm_mha", "SM90", "0.5.19", spec=MTP),
        Cell("trtllm_mha", "SM90", "0.5.23", spec=MTP),
    ),
    (
        "xqa_spec_verify_mask",
        Cell("trtllm_mha", "SM120", "0.5.20", spec=MTP),
        Cell("fmha_v2", "SM120", "0.5.20", spec=MTP),
    ),
    (  # 0.5.21: target-verify has the mask, draft-extend on XQA has not
        "xqa_spec_verify_mask",
        Cell("trtllm_mha", "SM90", "0.5.21", spec=MTP),
        Cell("fmha_v2", "SM90", "0.5.21", spec=MTP),
    ),
    (  # draft-extend follows verify (the prefill backend here); draft decode on XQA has q_len 1
        "xqa_spec_verify_mask",
        Cell("trtllm_mha", "SM90", "0.5.20", spec=MTP),
        Cell(DECODE_TRTLLM, "SM90", "0.5.20", spec=MTP),
    ),
    (
        "ragged_verify_mode_invalid",
        Cell(spec=MTP, env={"SGLANG_RAGGED_VERIFY_MODE": "ragged"}),
        Cell(spec=MTP, env=RAGGED),
    ),
    (
        "mamba_no_buffer_page_size",
        Cell(mamba=True, page=64, extra=[*NO_BUFFER, "--disable-overlap-schedule"]),
        Cell(mamba=True, page=64, extra=[*NO_BUFFER, "--disable-radix-cache"]),
    ),
    (
        "mamba_no_buffer_overlap",
        Cell(mamba=True, page=1, extra=NO_BUFFER),
        Cell(mamba=True, page=1, extra=[*NO_BUFFER, "--disable-overlap-schedule"]),
    ),
    (  # auto picks no_buffer (overlap off, page 1) and turns the overlap schedule off itself
        "mamba_no_buffer_trtllm_mha",
        Cell("trtllm_mha", mamba=True, page=1, extra=["--disable-overlap-schedule"]),
        Cell("trtllm_mha", mamba=True, page=1, extra=["--disable-radix-cache"]),
    ),
    (  # non-triton linear attention has no extra buffer: auto falls back to no_buffer
        "mamba_no_buffer_trtllm_mha",
        Cell("trtllm_mha", mamba=True, page=1, extra=["--linear-attn-backend", "flashinfer"]),
        Cell("trtllm_mha", mamba=True, page=1),
    ),
    (
        "trtllm_gen_page_size_geometry",
        Cell("trtllm_mha", "SM100", page=128, geometry=MHA),
        Cell("trtllm_mha", "SM100", page=128),
    ),
    (
        "trtllm_gen_page_size_geometry",
        Cell("trtllm_mha", "SM100", page=128, geometry=(8, 2, 192, 128)),
        Cell("trtllm_mha", "SM90", page=128, geometry=(8, 2, 192, 128)),  # XQA has page 128
    ),
    (  # 8 query and 2 KV heads: per rank 1/1 over TP 8 (not GQA), 2/1 over TP 4
        "trtllm_gen_page_size_geometry",
        Cell("trtllm_mha", "SM100", page=128, tp=8),
        Cell("trtllm_mha", "SM100", page=128, tp=4),
    ),
    (
        "trtllm_mha_sm120_fp8_checkpoint",
        Cell("fmha_v2", "SM120", kv_quant="FP8"),
        Cell("fmha_v2", "SM120", kv="bf16", kv_quant="FP8"),
    ),
    (
        "xqa_ragged_verify",
        Cell("trtllm_mha", "SM90", spec=DSPARK, env=RAGGED),
        Cell("trtllm_mha", "SM90", spec=MTP, env=RAGGED),  # only DSpark verifies ragged
    ),
    (
        "xqa_ragged_verify",
        Cell("trtllm_mha", "SM120", spec=DSPARK, env={"SGLANG_RAGGED_VERIFY_MODE": "cap-accept"}),
        Cell("trtllm_mha", "SM100", spec=DSPARK, env=RAGGED),
    ),
    (
        "skip_softmax_decode_xqa",
        Cell("trtllm_mha", skip=(None, 1.0)),
        Cell("trtllm_mha", "SM100", skip=(None, 1.0)),
    ),
    (
        "skip_softmax_decode_unused",
        Cell("flashinfer", skip=(None, 1.0)),
        Cell("trtllm_mha", "SM100", skip=(None, 1.0)),
    ),
    (
        "skip_softmax_prefill_unused",
        Cell("flashinfer", skip=(1.0, None)),
        Cell("fmha_v2", skip=(1.0, None)),
    ),
]


def rule_ids(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


@pytest.mark.parametrize(("rule", "trigger", "clear"), CASES, ids=[c[0] for c in CASES])
def test_rule(rule: str, trigger: Cell, clear: Cell) -> None:
    found = trigger.run()
    assert rule in rule_ids(found), found
    assert rule not in rule_ids(clear.run())
    expected_outcomes = {r.outcome for r in RULES if r.id == rule}
    assert {f.outcome for f in found if f.rule == rule} <= expected_outcomes


def test_every_rule_has_a_case() -> None:
    assert {r.id for r in RULES} == {c[0] for c in CASES}


def test_messages_are_sglangs_text_filled_in() -> None:
    page = next(
        f for f in Cell("trtllm_mha", "SM100", page=8).run() if f.rule == "trtllm_mha_page_size"
    )
    assert page.message == (
        "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, "
        "changing page_size from 8 to 64."
    )
    det = Cell("fmha_v2", "SM100", extra=["--enable-deterministic-inference"]).run()
    assert det[0].message.endswith("but you explicitly specified 'trtllm_mha'.")
    assert "{" not in "".join(f.message for c in CASES for f in c[1].run())


def test_0517_message_differs_from_0519() -> None:
    old = Cell("fmha_v2", "SM90", "0.5.17").run()
    new = Cell("fmha_v2", "SM89", "0.5.19").run()
    assert "only supported on Blackwell GPUs (SM100)" in old[0].message
    assert "requires Hopper (SM90), Blackwell (SM100), or SM120" in new[0].message


def test_adjustments_feed_later_rules() -> None:
    # fa3 + fp8_e5m2 becomes triton before the runtime fa3 assert: no crash on SM100.
    found = Cell("fa3", "SM100", kv="fp8_e5m2").run()
    assert rule_ids(found) == {"fa3_fp8_e5m2_to_triton"}
    assert outcome_of(found) == "adjust" and is_runnable(found)


@pytest.mark.parametrize(
    ("findings", "outcome"),
    [
        (Cell().run(), "ok"),
        (Cell("flashinfer", skip=(1.0, None)).run(), "no-effect"),
        (Cell("fa3", kv="fp8_e5m2", skip=(1.0, None)).run(), "adjust"),
        (Cell("fa3", "SM120").run(), "crash-at-start"),
        (Cell("trtllm_mha", "SM80", mla=True).run(), "reject"),  # reject wins over the crash
    ],
)
def test_outcome_of(findings: list[Finding], outcome: str) -> None:
    assert outcome_of(findings) == outcome
    assert is_runnable(findings) is (outcome not in ("reject", "crash-at-start"))


VERIFY = {"SM90": "fa3", "SM120": "flashinfer"}


@pytest.mark.parametrize("family", ["SM90", "SM120"])
@pytest.mark.parametrize(
    ("version", "verify", "draft"),
    [
        ("0.5.19", "routed", "routed"),  # no XQA mask: verify and draft-extend routed away
        ("0.5.20", "routed", "routed"),
        ("0.5.21", "xqa", "routed"),  # mask for target-verify only: the draft worker routed
        ("0.5.22", "xqa", "xqa"),  # mask for verify and draft-extend
        ("0.5.23", "xqa", "xqa"),
    ],
)
def test_fmha_v2_with_speculation_by_release(
    family: str, version: str, verify: str, draft: str
) -> None:
    cell = Cell("fmha_v2", family, version, spec=MTP)
    assert is_runnable(cell.run()), cell.run()
    plan = cell.plan()
    routed = VERIFY[family]
    expected = {"verify": routed if verify == "routed" else "xqa"}
    expected["draft"] = routed if draft == "routed" else "xqa"
    assert plan.runs["prefill"] == "fmha_v2"
    assert {k: plan.runs[k] for k in expected} == expected
    assert ("--speculative-attention-mode" in plan.args) is (verify == "routed")
    assert ("--speculative-draft-attention-backend" in plan.args) is (draft == "routed")
    # The plain trtllm_mha flags, without the routing, crash until the mask covers draft-extend.
    plain = outcome_of(Cell("trtllm_mha", family, version, spec=MTP).run())
    assert plain == ("ok" if draft == "xqa" else "crash-at-start")
