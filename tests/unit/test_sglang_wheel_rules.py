"""Every compatibility rule against the wheels it was read from.

``benchmarks/results/sglang-rules.json`` is written by ``benchmarks/sglang_rules/read_wheels.py``
from the SGLang 0.5.19-0.5.23 and FlashInfer 0.6.18 / 0.7.1 / 0.7.2 / 0.7.4 wheels: where each
rule's message was found, and the code facts the conditions stand on. A changed rule or message
without a re-read fails here; so does a rule whose range claims a release that lacks its message.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from backends.compat import Finding, applies
from backends.compat_rules import RULES
from backends.model_rules import RAGGED_VERIFY_ALGORITHMS
from backends.resolved import CellSpec, resolve_cell
from backends.server_info import LATEST, SURFACE_BY_VERSION
from backends.version_ranges import in_range, parse_version
from benchmarks.sglang_rules import read_wheels
from pipeline.simserver.served import Flavour
from tests.helpers.compat_cells import MTP, Cell

REPO = Path(__file__).resolve().parents[2]

READ = json.loads((REPO / "benchmarks/results/sglang-rules.json").read_text())
RELEASES = READ["sglang"]
FACTS = READ["facts"]
ALL = "0.5.19-0.5.23"
HOOK = "sglang/srt/arg_groups/"
TRTLLM = "sglang/srt/layers/attention/trtllm_mha_backend.py"
REGISTRY = "sglang/srt/layers/attention/attention_registry.py"
NO_BUFFER = ["--mamba-radix-cache-strategy", "no_buffer"]
MHA = (8, 8, 128, None)  # as many KV heads as query heads

# (rule, a cell it fires on, the exact text SGLang or FlashInfer gives there, the wheel file,
#  the releases read). FlashInfer files are read in the FlashInfer release each SGLang pins.
CITATIONS = [
    ("spec_chain_draft_tokens", Cell(spec=("EAGLE", 3, 1, 8)),
     "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
     "speculative_eagle_topk == 1", HOOK + "speculative_hook.py", ALL),
    ("spec_max_running_requests_48", Cell(spec=MTP, max_running=None),
     "Max running requests is reset to 48 for speculative decoding. You can override this by "
     "explicitly setting --max-running-requests.", HOOK + "speculative_hook.py", ALL),
    ("ragged_verify_mode_invalid", Cell(spec=MTP, env={"SGLANG_RAGGED_VERIFY_MODE": "on"}),
     "invalid SGLANG_RAGGED_VERIFY_MODE='on'; expected one of 'static', 'cap-accept', 'compact'",
     "sglang/srt/speculative/ragged_verify.py", ALL),
    ("mamba_no_buffer_page_size", Cell(mamba=True, page=64, extra=NO_BUFFER),
     "no_buffer only supports page_size=1.", HOOK + "mamba_hook.py", ALL),
    ("mamba_no_buffer_overlap", Cell(mamba=True, page=1, extra=NO_BUFFER),
     "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",
     HOOK + "mamba_hook.py", ALL),
    ("mamba_no_buffer_trtllm_mha",
     Cell("trtllm_mha", mamba=True, page=1, extra=["--disable-overlap-schedule"]),
     "no_buffer do not support trtllm_mha attention backend.", HOOK + "mamba_hook.py", ALL),
    ("trtllm_mha_page_size", Cell("trtllm_mha", "SM100", page=8),
     "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, changing page_size from 8 "
     "to 64.", HOOK + "overrides.py", ALL),
    ("fa3_fp8_e5m2_to_triton", Cell("fa3", kv="fp8_e5m2"),
     "FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",
     HOOK + "overrides.py", ALL),
    ("trtllm_mha_prefill_gpu", Cell("fmha_v2", "SM89"),
     "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
     "Please use a different prefill backend.", HOOK + "attention_hook.py", ALL),
    ("trtllm_mha_sm120_fp8_or_prefill_skip_softmax", Cell("fmha_v2", "SM120", kv="fp8_e4m3"),
     "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.",
     HOOK + "attention_hook.py", ALL),
    ("trtllm_mha_decode_gpu", Cell("trtllm_mha", "SM86"),
     "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and "
     "(SM120) GPUs. Please use a different decode backend.", HOOK + "attention_hook.py", ALL),
    ("trtllm_mha_prefill_context_parallel", Cell("fmha_v2", extra=["--attn-cp-size", "2"]),
     "Prefill context parallelism with the TRTLLM MHA prefill backend requires SM100 "
     "(trtllm-gen context kernel): the SM90/SM120 fmha_v2 prefill path does not implement CP "
     "shard masking.", HOOK + "attention_hook.py", ALL),
    ("trtllm_mha_spec_topk", Cell("trtllm_mha", "SM100", spec=("EAGLE", 3, 2, 6)),
     "trtllm_mha backend only supports topk = 1 for speculative decoding.",
     HOOK + "speculative_hook.py", ALL),
    ("page_tree_spec_backends", Cell("trtllm_mha", "SM100", spec=("EAGLE", 3, 2, 6), page=64),
     "speculative_eagle_topk > 1 with page_size > 1 is only supported on ('flashinfer', 'fa3', "
     "'triton'); got attention_backend=trtllm_mha", HOOK + "speculative_hook.py", ALL),
    ("deterministic_backend", Cell("fmha_v2", "SM100", extra=["--enable-deterministic-inference"]),
     "Currently only ['ascend', 'fa3', 'fa4', 'flashinfer', 'intel_xpu', 'triton'] attention "
     "backends are supported for deterministic inference, but you explicitly specified "
     "'trtllm_mha'.", HOOK + "overrides.py", ALL),
    ("trtllm_mha_mla", Cell("trtllm_mha", "SM100", mla=True),
     "trtllm_mha backend can only be used with non-MLA models.", REGISTRY, ALL),
    ("fa3_gpu", Cell("fa3", "SM100"),
     "FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend "
     "flashinfer`.", REGISTRY, ALL),
    ("xqa_spec_verify_mask", Cell("trtllm_mha", "SM90", "0.5.20", spec=MTP),
     "Mask is required for speculative decoding", "flashinfer/xqa.py", "0.5.19-0.5.20"),
    ("xqa_spec_verify_mask", Cell("trtllm_mha", "SM120", "0.5.21", spec=MTP),
     "Mask is required for speculative decoding", "flashinfer/xqa.py", "0.5.21"),
    ("trtllm_gen_page_size_geometry", Cell("trtllm_mha", "SM100", page=128, geometry=MHA),
     "trtllm_mha with page_size=128 requires trtllm-gen's dynamic tokens-per-page kernels, which "
     "only support GQA (q heads per kv head > 1, got 8/8) with equal QK/V head dims (got "
     "128/128) and a power-of-2 page size. Use --page-size 64 instead.", TRTLLM, ALL),
    ("trtllm_mha_sm120_fp8_checkpoint", Cell("fmha_v2", "SM120", kv_quant="FP8"),
     "FP8 (e4m3) is not yet supported for FMHAv2 on SM120 (Blackwell). Use fp16 or bf16 instead.",
     "flashinfer/prefill.py", ALL),
    ("xqa_ragged_verify",
     Cell("trtllm_mha", spec=("DSPARK", 3, 1, 4), env={"SGLANG_RAGGED_VERIFY_MODE": "compact"}),
     "Compact ragged verify (variable-length cum_seq_lens_q) requires the trtllm-gen decode "
     "kernel; the xqa impl (sm90 / sm120) rejects it. Disable SGLANG_RAGGED_VERIFY_MODE for this "
     "configuration.", TRTLLM, ALL),
]  # fmt: skip
# Rules that SGLang states without text of its own: what they stand on is a fact test below.
SILENT = {
    "spec_params_without_num_steps", "spec_tree_draft_tokens_limit", "skip_softmax_decode_xqa",
    "skip_softmax_decode_unused", "skip_softmax_prefill_unused",
}  # fmt: skip
NOT_READ = {"trtllm_mha_prefill_gpu"}  # its 0.5.17 text: before the first wheel read here


def releases(span: str) -> list[str]:
    first, _, last = span.partition("-")
    return RELEASES[RELEASES.index(first) : RELEASES.index(last or first) + 1]


def finding(cell: Cell, rule: str) -> Finding:
    return next(f for f in cell.run() if f.rule == rule)


@pytest.mark.parametrize(("rule", "cell", "text", "source", "span"), CITATIONS,
                         ids=[f"{c[0]}@{c[4]}" for c in CITATIONS])  # fmt: skip
def test_each_rule_gives_the_text_read_in_its_wheel(
    rule: str, cell: Cell, text: str, source: str, span: str
) -> None:
    assert finding(cell, rule).message == text
    resolved = resolve_cell(CellSpec(*cell.args(), options=cell.options()))
    (held,) = [r for r in RULES if r.id == rule and applies(r, resolved)]
    assert held.source == source
    (read,) = [r for r in READ["rules"] if r["id"] == rule and r["message"] == held.message]
    assert read["source"] == source
    for release in releases(span):
        assert read["found"][release], f"{rule}: not in {source} of {release}"


def test_every_rule_is_cited_or_stands_on_a_fact() -> None:
    cited = {c[0] for c in CITATIONS}
    for rule in RULES:
        before_reads = rule.until is not None and parse_version(rule.until) <= parse_version(
            RELEASES[0]
        )
        assert rule.id in cited | SILENT or (rule.id in NOT_READ and before_reads), rule.id


def test_the_read_is_current_for_every_rule() -> None:
    # Each rule with text: found in its source in every read release its range claims.
    for rule in RULES:
        if rule.message in read_wheels.NO_TEXT:
            continue
        (read,) = [r for r in READ["rules"] if r["id"] == rule.id and r["message"] == rule.message]
        assert read["source"] == rule.source, "rerun benchmarks/sglang_rules/read_wheels.py --write"
        claimed = [v for v in RELEASES if in_range(parse_version(v), rule.since, rule.until)]
        assert all(read["found"][v] for v in claimed), (rule.id, read["found"])


def test_xqa_mask_as_read_decides_where_fmha_v2_verifies_and_drafts() -> None:
    # never: verify and draft-extend leave XQA; target-verify only: the draft worker leaves.
    expected = {
        "never": ("fa3", "fa3"),
        "target-verify only": ("xqa", "fa3"),
        "every q_len > 1": ("xqa", "xqa"),
    }
    for release, mask in FACTS["xqa_mask"].items():
        runs = Cell("fmha_v2", "SM90", release, spec=MTP).plan().runs
        assert (runs["verify"], runs["draft"]) == expected[mask], release


def test_draft_extend_follows_the_draft_flag_then_the_attention_mode() -> None:
    assert set(FACTS["draft_extend_backend"].values()) == {"draft flag, else by attention mode"}
    flags = resolve_cell(CellSpec(*Cell("trtllm_mha", spec=MTP).args())).flags
    assert flags.draft_extend == flags.verify == "trtllm_mha"


def test_the_simulated_server_drops_the_spec_aliases_where_the_wheels_do() -> None:
    for release, aliases in FACTS["spec_aliases"].items():
        assert Flavour(release, 4, timing_fields=False).aliases is (aliases == "present"), release
    assert FACTS["spec_aliases"]["0.5.21"] == "absent"  # gone in 0.5.21, not 0.5.23


def test_skip_softmax_decode_does_nothing_on_xqa_in_every_flashinfer_read() -> None:
    assert set(FACTS["xqa_skip_softmax"].values()) == {"dropped"}
    (rule,) = [r for r in RULES if r.id == "skip_softmax_decode_xqa"]
    assert rule.until is None and "0.7.4" in rule.detail
    for family in ("SM90", "SM120"):
        found = finding(Cell("fmha_v2", family, spec=MTP, skip=(None, 1.0)), rule.id)
        assert found.outcome == "no-effect"
    assert rule.id not in {f.rule for f in Cell("trtllm_mha", "SM100", skip=(None, 1.0)).run()}


def test_ragged_verify_is_dspark_only_in_every_release() -> None:
    assert set(FACTS["ragged_verify_algorithms"].values()) == {"self.is_dspark()"}
    assert frozenset({"DSPARK"}) == RAGGED_VERIFY_ALGORITHMS


def test_sm120_start_up_check_reads_the_flag_while_auto_follows_the_checkpoint() -> None:
    for condition in FACTS["sm120_fp8_check"].values():
        assert "cfg.kv_cache_dtype == 'fp8_e4m3'" in condition and "auto" not in condition
    assert set(FACTS["fp8_checkpoint_auto"].values()) == {"reads kv_cache_quant_algo"}
    # So the start-up check lets the cell through and FlashInfer raises at runtime.
    rules = {f.rule for f in Cell("fmha_v2", "SM120", kv_quant="FP8").run()}
    assert rules == {"trtllm_mha_sm120_fp8_checkpoint"}


def test_the_script_reads_messages_as_python_joins_them(tmp_path: Path) -> None:
    source = (
        'raise ValueError(\n    f"trtllm_mha with page_size={n} requires "\n'
        '    "trtllm-gen kernels"\n)\nx = "no_buffer only " "supports page_size=1."\n'
    )
    wheel_file = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel_file, "w") as zf:
        zf.writestr("pkg/mod.py", source)
    wheel = read_wheels.Wheel(wheel_file)
    found = read_wheels.needles(
        "r", "trtllm_mha with page_size={page_size} requires trtllm-gen kernels"
    )
    assert read_wheels.has_message(wheel, "pkg/mod.py", found)
    assert read_wheels.has_message(wheel, "pkg/mod.py", ("no_buffer only supports page_size=1.",))
    assert not read_wheels.has_message(wheel, "pkg/mod.py", ("requires trtllm-gen kernels x",))
    assert not read_wheels.has_message(wheel, "pkg/other.py", ("no_buffer",))


def test_every_release_read_has_the_server_info_keys_the_project_reads() -> None:
    for release, keys in FACTS["server_info_keys"].items():
        assert keys == "all present", release
        assert SURFACE_BY_VERSION[release] == LATEST, release
