from __future__ import annotations

import json
import re
import time
from itertools import product

import pytest

from backends.catalog import load_backends
from backends.gpu import FAMILIES
from backends.matrix import GENERIC_MODEL, KV_DTYPES, MatrixCell, build_matrix, main

BACKENDS = list(load_backends().values())


def by_key(version: str) -> dict[tuple, MatrixCell]:
    return {c.key: c for c in build_matrix(BACKENDS, GENERIC_MODEL, version)}


def test_matrix_covers_every_axis_and_is_fast() -> None:
    start = time.perf_counter()
    cells = build_matrix(BACKENDS, GENERIC_MODEL, "0.5.23")
    assert time.perf_counter() - start < 1.0
    assert len(cells) == len(BACKENDS) * len(KV_DTYPES) * 2 * 2 * len(FAMILIES)
    assert len({c.key for c in cells}) == len(cells)
    assert {c.outcome for c in cells} <= {"ok", "adjust", "no-effect", "reject", "crash-at-start"}


def test_0519_vs_0523_differ_exactly_where_xqa_verify_differs() -> None:
    old, new = by_key("0.5.19"), by_key("0.5.23")
    differing = {k for k in old if (old[k].outcome, old[k].runs) != (new[k].outcome, new[k].runs)}
    # Speculation on SM90/SM120 with trtllm_mha flags: 0.5.19 routes fmha_v2's verify away from
    # XQA (and the plain trtllm_mha variant crashes), 0.5.23 verifies on XQA. Cells SGLang
    # rejects in both versions (SM120 with fp8_e4m3 or prefill skip-softmax) do not differ.
    expected = {
        (variant, kv, skip, True, family)
        for variant, kv, skip, family in product(
            ("fmha_v2", "trtllm_mha"), KV_DTYPES, (False, True), ("SM90", "SM120")
        )
        if not (family == "SM120" and (kv == "fp8_e4m3" or skip))
    }
    assert differing == expected
    fmha = ("fmha_v2", "bf16", False, True, "SM90")
    assert (old[fmha].runs["verify"], new[fmha].runs["verify"]) == ("fa3", "xqa")
    assert old[fmha].notes and not new[fmha].notes
    plain = ("trtllm_mha", "bf16", False, True, "SM120")
    assert (old[plain].outcome, new[plain].outcome) == ("crash-at-start", "ok")


def test_0517_has_no_fmha_v2_on_hopper() -> None:
    cells = by_key("0.5.17")
    assert cells[("fmha_v2", "auto", False, False, "SM90")].outcome == "reject"
    assert cells[("fmha_v2", "auto", False, False, "SM100")].outcome == "ok"


@pytest.mark.parametrize(
    ("key", "outcome", "runs"),
    [
        (("fa3", "auto", False, False, "SM90"), "ok", {"prefill": "fa3", "decode": "fa3"}),
        (("fa3", "auto", False, False, "SM120"), "crash-at-start", None),
        (
            ("fa3", "fp8_e5m2", False, False, "SM90"),
            "adjust",
            {"prefill": "triton", "decode": "triton"},
        ),
        (
            ("fmha_v2", "auto", False, False, "SM100"),
            "ok",
            {"prefill": "trtllm-gen", "decode": "trtllm-gen"},
        ),
        (
            ("fmha_v2", "auto", True, False, "SM90"),
            "no-effect",
            {"prefill": "fmha_v2", "decode": "xqa"},
        ),
        (("fmha_v2", "fp8_e4m3", False, False, "SM120"), "reject", None),
        (("fmha_v2", "auto", False, False, "SM89"), "reject", None),
        (
            ("flashinfer", "fp8_e4m3", False, True, "SM120"),
            "ok",
            {
                "prefill": "flashinfer",
                "decode": "flashinfer",
                "verify": "flashinfer",
                "draft": "flashinfer",
            },
        ),
    ],
)
def test_known_cells_0523(key: tuple, outcome: str, runs: dict[str, str] | None) -> None:
    cell = by_key("0.5.23")[key]
    assert cell.outcome == outcome
    if runs is not None:
        assert cell.runs == runs


def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--sglang-version", "0.5.19", "--variants", "fmha_v2", "--families", "SM90,SM120"])
        == 0
    )
    out = capsys.readouterr().out
    assert "SGLang 0.5.19" in out
    assert "ok fmha2/fa3/fa3" in out and "ok fmha2/fi/fi" in out
    assert "SM100" not in out.splitlines()[2]  # only the families asked for


@pytest.mark.parametrize(
    ("version", "sm90", "sm120"),
    [
        ("0.5.21", "ok fmha2/xqa/xqa+fa3", "ok fmha2/xqa/xqa+fi"),  # the draft worker routed
        ("0.5.22", "ok fmha2/xqa/xqa ", "ok fmha2/xqa/xqa\n"),
    ],
)
def test_cli_text_shows_a_draft_worker_routed_apart(
    capsys: pytest.CaptureFixture[str], version: str, sm90: str, sm120: str
) -> None:
    argv = ["--sglang-version", version, "--variants", "fmha_v2", "--families", "SM90,SM120"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    spec_row = next(line for line in lines if re.search(r"^fmha_v2\s+bf16\s+off\s+on\s", line))
    assert sm90.strip() in spec_row and sm120.strip() in spec_row
    assert "+" not in spec_row or version == "0.5.21"


def test_cli_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "markdown", "--variants", "fa3", "--families", "SM100"]) == 0
    out = capsys.readouterr().out
    assert "| variant | kv | skip | spec | SM100 |" in out
    assert "**crash-at-start**" in out
    assert "FlashAttention v3 Backend requires SM>=80 and SM<=90" in out


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "json", "--max-running-requests", "none"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["sglang_version"] == "0.5.23"
    assert len(body["cells"]) == len(BACKENDS) * len(KV_DTYPES) * 2 * 2 * len(FAMILIES)
    spec_cells = [c for c in body["cells"] if c["speculative"]]
    # With no --max-running-requests, SGLang's reset to 48 shows on every speculative cell.
    assert all(
        "spec_max_running_requests_48" in {f["rule"] for f in c["findings"]} for c in spec_cells
    )


def test_cli_with_a_model_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "json", "--model", "deepseek_v3", "--variants", "trtllm_mha"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    sm100 = [c for c in cells if c["family"] == "SM100"]
    assert {c["outcome"] for c in sm100} == {"crash-at-start"}  # MLA cannot use trtllm_mha


@pytest.mark.parametrize(
    "argv",
    [
        ["--variants", "fmha3"],
        ["--families", "SM75"],
        ["--sglang-version", "latest"],
        ["--model", "no_such_model"],
        ["--max-running-requests", "many"],
    ],
)
def test_cli_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err
