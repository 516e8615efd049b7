from __future__ import annotations

import pytest

from backends.backend_conf import BackendConf
from backends.variants import AttentionFlags, kernel, route_flags, runs_of
from backends.version_ranges import parse_version

FMHA_V2 = BackendConf(name="fmha_v2", attention_backend="trtllm_mha")
TRTLLM_MHA = BackendConf(name="trtllm_mha", attention_backend="trtllm_mha")


@pytest.mark.parametrize(
    ("backend", "phase", "family", "expected"),
    [
        ("trtllm_mha", "prefill", "SM90", "fmha_v2"),
        ("trtllm_mha", "decode", "SM90", "xqa"),
        ("trtllm_mha", "prefill", "SM120", "fmha_v2"),
        ("trtllm_mha", "decode", "SM120", "xqa"),
        ("trtllm_mha", "prefill", "SM100", "trtllm-gen"),
        ("trtllm_mha", "decode", "SM103", "trtllm-gen"),
        ("trtllm_mha", "prefill", "SM89", "unsupported"),
        ("fa3", "decode", "SM90", "fa3"),
        ("flashinfer", "prefill", "SM120", "flashinfer"),
        (None, "prefill", "SM90", "default"),
    ],
)
def test_kernel(backend: str | None, phase: str, family: str, expected: str) -> None:
    assert kernel(backend, phase, family) == expected


@pytest.mark.parametrize(
    ("family", "version", "decode", "routed"),
    [
        ("SM90", "0.5.19", "fa3", True),
        ("SM90", "0.5.20", "fa3", True),
        ("SM120", "0.5.19", "flashinfer", True),
        ("SM90", "0.5.21", "trtllm_mha", False),  # the draft worker only, see below
        ("SM90", "0.5.22", "trtllm_mha", False),
        ("SM90", "0.5.23", "trtllm_mha", False),
        ("SM120", "0.5.23", "trtllm_mha", False),
        ("SM100", "0.5.19", "trtllm_mha", False),  # trtllm-gen verifies fine
    ],
)
def test_fmha_v2_verify_routing(family: str, version: str, decode: str, routed: bool) -> None:
    flags, notes = route_flags(FMHA_V2, family, parse_version(version), speculative=True)
    assert flags.prefill == "trtllm_mha"
    assert flags.decode == decode
    assert flags.verify == decode
    assert (flags.speculative_attention_mode == "decode") is routed
    if routed:
        assert flags.draft_attention_backend == decode
        assert flags.attention_backend is None
        assert version in notes[0] and "0.5.21" in notes[0]


@pytest.mark.parametrize(("family", "draft"), [("SM90", "fa3"), ("SM120", "flashinfer")])
def test_fmha_v2_on_0521_routes_the_draft_worker_only(family: str, draft: str) -> None:
    # 0.5.21 passes XQA its mask for target-verify only: verify stays, draft-extend moves.
    flags, notes = route_flags(FMHA_V2, family, parse_version("0.5.21"), speculative=True)
    assert flags.attention_backend == "trtllm_mha" and flags.speculative_attention_mode is None
    assert (flags.verify, flags.draft, flags.draft_extend) == ("trtllm_mha", draft, draft)
    assert "target-verify only" in notes[0]
    assert runs_of(flags, family, speculative=True)["verify"] == "xqa"


def test_no_routing_without_speculation_or_for_plain_trtllm_mha() -> None:
    v = parse_version("0.5.19")
    assert route_flags(FMHA_V2, "SM90", v, speculative=False) == (
        AttentionFlags(attention_backend="trtllm_mha"),
        [],
    )
    assert route_flags(TRTLLM_MHA, "SM90", v, speculative=True)[1] == []


def test_speculative_only_flags_dropped_without_speculation() -> None:
    conf = BackendConf(
        name="x",
        attention_backend="flashinfer",
        draft_attention_backend="triton",
        speculative_attention_mode="decode",
    )
    flags, _ = route_flags(conf, "SM90", parse_version("0.5.23"), speculative=False)
    assert (flags.draft_attention_backend, flags.speculative_attention_mode) == (None, None)


@pytest.mark.parametrize(
    ("flags", "family", "expected"),
    [
        # trtllm_mha verifies with its decode kernel even when verify goes through prefill.
        (
            AttentionFlags(attention_backend="trtllm_mha"),
            "SM90",
            {"prefill": "fmha_v2", "decode": "xqa", "verify": "xqa", "draft": "xqa"},
        ),
        (
            AttentionFlags(attention_backend="trtllm_mha"),
            "SM100",
            dict.fromkeys(("prefill", "decode", "verify", "draft"), "trtllm-gen"),
        ),
        (
            AttentionFlags(
                prefill_attention_backend="trtllm_mha",
                decode_attention_backend="fa3",
                draft_attention_backend="fa3",
                speculative_attention_mode="decode",
            ),
            "SM90",
            {"prefill": "fmha_v2", "decode": "fa3", "verify": "fa3", "draft": "fa3"},
        ),
        (
            AttentionFlags(
                prefill_attention_backend="trtllm_mha", decode_attention_backend="flashinfer"
            ),
            "SM90",
            {"prefill": "fmha_v2", "decode": "flashinfer", "verify": "xqa", "draft": "flashinfer"},
        ),
    ],
)
def test_runs_of(flags: AttentionFlags, family: str, expected: dict[str, str]) -> None:
    assert runs_of(flags, family, speculative=True) == expected
    assert runs_of(flags, family, speculative=False) == {
        k: v for k, v in expected.items() if k in ("prefill", "decode")
    }


def test_verify_backend_overrides_the_routes_default():
    from backends.backend_conf import BackendConf
    from backends.variants import route_flags
    from backends.version_ranges import parse_version

    conf = BackendConf(name="fmha_v2", attention_backend="trtllm_mha", verify_backend="flashinfer")
    flags, notes = route_flags(conf, "SM90", parse_version("0.5.19"), speculative=True)
    assert flags.decode_attention_backend == flags.draft_attention_backend == "flashinfer"
    assert flags.prefill_attention_backend == "trtllm_mha"
    assert "flashinfer" in notes[0]
    flags, notes = route_flags(conf, "SM90", parse_version("0.5.23"), speculative=True)
    assert notes == [] and flags.attention_backend == "trtllm_mha"  # 0.5.23 verifies on XQA
