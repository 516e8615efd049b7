from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from backends.catalog import load_backends
from backends.compat import Finding, is_runnable, outcome_of, preflight
from backends.compat_rules import RULES
from backends.config import (
    AttentionGeometry,
    BackendConf,
    GpuConf,
    ModelConf,
    SkipSoftmaxConf,
    SpeculativeConf,
)
from backends.gpu import gpu_from_config
from backends.launch import LaunchOptions, plan_launch
from backends.resolved import CellSpec

BACKENDS = load_backends()
CAPABILITY = {
    "SM80": "8.0",
    "SM86": "8.6",
    "SM89": "8.9",
    "SM90": "9.0",
    "SM100": "10.0",
    "SM103": "10.3",
    "SM120": "12.0",
}
MTP = ("EAGLE", 3, 1, 4)
FA4 = BackendConf(name="fa4", attention_backend="fa4")
DECODE_TRTLLM = BackendConf(
    name="x",
    attention_backend=None,
    prefill_attention_backend="flashinfer",
    decode_attention_backend="trtllm_mha",
)


@dataclass
class Cell:
    """A cell in a few words; run() gives its findings."""

    variant: str | BackendConf = "flashinfer"
    family: str = "SM90"
    version: str = "0.5.23"
    kv: str = "auto"
    skip: tuple[float | None, float | None] = (None, None)
    spec: tuple[str, int | None, int | None, int | None] | None = None
    page: int | None = None
    mla: bool = False
    extra: list[str] = field(default_factory=list)
    max_running: int | None = 64  # set so that the reset-to-48 rule stays out of the way

    def args(self) -> tuple:
        algo, steps, topk, draft = self.spec or (None, None, None, None)
        spec = SpeculativeConf(
            algorithm=algo, num_steps=steps, eagle_topk=topk, num_draft_tokens=draft
        )
        model = ModelConf(
            is_mla=self.mla,
            extra_args=list(self.extra),
            speculative=spec,
            attention=AttentionGeometry(page_size=self.page),
        )
        backend = self.variant if isinstance(self.variant, BackendConf) else BACKENDS[self.variant]
        gpu = gpu_from_config(GpuConf(detect=False, compute_capability=CAPABILITY[self.family]))
        return model, backend, self.kv, SkipSoftmaxConf(*self.skip), gpu, self.version

    def run(self) -> list[Finding]:
        return preflight(
            CellSpec(*self.args(), options=LaunchOptions(max_running_requests=self.max_running))
        )


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


@pytest.mark.parametrize("family", ["SM90", "SM120"])
def test_fmha_v2_with_speculation_0519_vs_0523(family: str) -> None:
    old = Cell("fmha_v2", family, "0.5.19", spec=MTP)
    new = Cell("fmha_v2", family, "0.5.23", spec=MTP)
    # Both start: 0.5.19 as the variant routes verify away from XQA, 0.5.23 as XQA has a mask.
    assert is_runnable(old.run()) and is_runnable(new.run())
    old_plan = plan_launch(CellSpec(*old.args(), LaunchOptions()))
    new_plan = plan_launch(CellSpec(*new.args(), LaunchOptions()))
    verify = {"SM90": "fa3", "SM120": "flashinfer"}[family]
    assert (old_plan.runs["prefill"], old_plan.runs["verify"]) == ("fmha_v2", verify)
    assert (new_plan.runs["prefill"], new_plan.runs["verify"]) == ("fmha_v2", "xqa")
    assert "--speculative-attention-mode" in old_plan.args
    assert "--speculative-attention-mode" not in new_plan.args
    # The plain trtllm_mha flags, without the routing, crash on 0.5.19 only.
    assert outcome_of(Cell("trtllm_mha", family, "0.5.19", spec=MTP).run()) == "crash-at-start"
    assert outcome_of(Cell("trtllm_mha", family, "0.5.23", spec=MTP).run()) == "ok"
