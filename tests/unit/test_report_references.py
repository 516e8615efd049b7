from pathlib import Path

import pytest
import yaml

from pipeline.report.load.references import ReferenceFileError, find_reference, load_references
from pipeline.report.load.tolerance import REPO_CONF

GOOD = {
    "eval": "gpqa_diamond",
    "kv_dtype": "auto",
    "speculative": None,
    "accuracy": 0.7,
    "provenance": {"source": "https://example.org/pr/1", "date": "2026-07-24", "setup": "8x198"},
}
MTP = {"algorithm": "NEXTN", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


def write(tmp_path: Path, entries: list, **top) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"model": "m", "entries": entries, **top}))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"provenance": None}, r"entries\[0\]\.provenance is missing"),
        ({"provenance": {"source": "x", "date": "2026-01-01"}}, r"provenance\.setup"),
        ({"provenance": {**GOOD["provenance"], "date": "July"}}, r"provenance\.date.*YYYY-MM-DD"),
        ({"accuracy": 72.5}, r"entries\[0\]\.accuracy = 72.5 must be in \[0.0, 1.0\].*0.725"),
        ({"accuracy": -0.1}, r"accuracy = -0.1 must be in \[0.0, 1.0\]"),
        ({"accept_length": 0.8}, r"accept_length = 0.8 must be >= 1"),
        ({"accuracy": "high"}, r"accuracy = 'high' must be a number"),
        ({"kv": "auto"}, r"unknown key entries\[0\]\.kv; allowed"),
        ({"accuracy": None}, r"needs accuracy and / or accept_length"),
        ({"provenance": {**GOOD["provenance"], "source": " "}}, r"provenance\.source is empty"),
    ],
)
def test_bad_entries_name_file_and_key(tmp_path, change, message):
    entry = {k: v for k, v in {**GOOD, **change}.items() if v is not None or k == "speculative"}
    path = write(tmp_path, [entry])
    with pytest.raises(ReferenceFileError, match=message) as err:
        load_references(tmp_path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("missing", ["eval", "kv_dtype", "speculative"])
def test_matching_keys_are_required(tmp_path, missing):
    write(tmp_path, [{k: v for k, v in GOOD.items() if k != missing}])
    with pytest.raises(ReferenceFileError, match=rf"entries\[0\]\.{missing} is missing"):
        load_references(tmp_path)


def test_bad_top_level(tmp_path):
    write(tmp_path, [GOOD], extra=1)
    with pytest.raises(ReferenceFileError, match="unknown key extra"):
        load_references(tmp_path)
    (tmp_path / "m.yaml").write_text("entries: []\n")
    with pytest.raises(ReferenceFileError, match="model"):
        load_references(tmp_path)


def test_the_repository_references_load_and_carry_provenance():
    refs = load_references(REPO_CONF / "references")
    assert refs and all(r.provenance["source"] for r in refs)


QWEN = ("qwen3-next-80b-a3b-thinking-fp8", "Qwen/Qwen3-Next-80B-A3B-Thinking-FP8")


@pytest.mark.parametrize(
    ("models", "kv", "spec", "variant", "expected"),
    [
        (QWEN, "auto", None, "fmha_v2", 0.725),  # PR #32272: FA3 bf16
        (("x", "Qwen/Qwen3-Next-80B-A3B-Thinking-FP8"), "bf16", None, "fa3", 0.725),  # by alias
        (QWEN, "auto", MTP, "fa3", 0.734),  # FA3 + MTP
        (QWEN, "fp8_e4m3", None, "fmha_v2", 0.727),
        (QWEN, "fp8_e4m3", MTP, "fmha_v2", None),  # not registered
        (("tiny-sim",), "fp8_e5m2", MTP, "triton", 0.72),  # kv / speculative: any
        (("other",), "auto", None, "fa3", None),
    ],
)
def test_find_reference_first_match(models, kv, spec, variant, expected):
    refs = load_references(REPO_CONF / "references")
    found = find_reference(refs, models=models, eval_name="gpqa_diamond", kv_dtype=kv,
                           speculative=spec, variant=variant, gpu="NVIDIA H200")  # fmt: skip
    assert (found.value("accuracy") if found else None) == expected


@pytest.mark.parametrize(
    ("rule", "gpu", "matches"),
    [("H200", "NVIDIA H200 (simulated)", True), (["B200", "H100"], "NVIDIA H200", False)],
)
def test_gpu_rule_matches_a_substring(tmp_path, rule, gpu, matches):
    write(tmp_path, [{**GOOD, "gpu": rule}])
    found = find_reference(load_references(tmp_path), models=("m",), eval_name="gpqa_diamond",
                           kv_dtype="auto", speculative=None, variant="fa3", gpu=gpu)  # fmt: skip
    assert (found is not None) == matches
