import pytest
import yaml

from pipeline.report.load.expected import apply_overrides, expected_jobs
from pipeline.results.sweep_jobs import BASIC_SWEEPER

CONFIG = {
    "model": {"name": "tiny-sim", "path": "tiny-sim", "speculative": {"algorithm": "EAGLE"}},
    "backend": {"name": "fa3"},
    "kv_dtype": {"name": "auto"},
    "skip_softmax": {"prefill": None, "decode": None},
}


def multirun(tmp_path, params, task, target=BASIC_SWEEPER):
    hydra = {
        "sweeper": {"_target_": target, "params": params},
        "overrides": {"task": task},
        "runtime": {"choices": {"backend": "fa3", "kv_dtype": "auto", "model": "tiny_sim"}},
    }
    path = tmp_path / "multirun.yaml"
    path.write_text(yaml.safe_dump({"hydra": hydra, **CONFIG}))
    return path


def test_jobs_are_hydras_cartesian_product_in_order(tmp_path):
    path = multirun(tmp_path, {"backend": "fmha_v2,fa3", "kv_dtype": "auto,fp8_e4m3"},
                    ["experiment=demo", "skip_softmax.prefill=0.5"])  # fmt: skip
    jobs, warning = expected_jobs(path)
    assert warning is None
    assert [j.num for j in jobs] == [0, 1, 2, 3]
    assert jobs[1].overrides == ("backend=fmha_v2", "kv_dtype=fp8_e4m3", "experiment=demo",
                                 "skip_softmax.prefill=0.5")  # fmt: skip
    assert [(j.identity.variant, j.identity.kv_dtype) for j in jobs] == [
        ("fmha_v2", "auto"),
        ("fmha_v2", "fp8_e4m3"),
        ("fa3", "auto"),
        ("fa3", "fp8_e4m3"),
    ]
    assert jobs[0].identity.skip_prefill == 0.5
    assert jobs[0].identity.speculative == {"algorithm": "EAGLE"}


def test_command_line_sweeps_count_too(tmp_path):
    jobs, _ = expected_jobs(multirun(tmp_path, {}, ["backend=fmha_v2,fa3,triton"]))
    assert [j.identity.variant for j in jobs] == ["fmha_v2", "fa3", "triton"]


def test_other_sweepers_are_reported_not_guessed(tmp_path):
    jobs, warning = expected_jobs(multirun(tmp_path, {}, [], target="optuna.Sweeper"))
    assert jobs == [] and "not Hydra's basic sweeper" in warning


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        (["model=other_model"], "model", "other_model"),
        (["model=tiny_sim"], "model", "tiny-sim"),  # the base choice keeps the config's name
        (["model.name=renamed"], "model", "renamed"),
        (["skip_softmax.decode=null"], "skip_decode", None),
        (["+skip_softmax.prefill=0.25"], "skip_prefill", 0.25),
    ],
)
def test_apply_overrides(overrides, field, value):
    base = {
        "model": "tiny-sim",
        "variant": "fa3",
        "kv_dtype": "auto",
        "skip_prefill": None,
        "skip_decode": 0.1,
        "_choices": {"model": "tiny_sim", "backend": "fa3"},
    }
    assert apply_overrides(base, overrides)[field] == value


def test_an_override_whose_value_is_not_yaml_is_left_alone() -> None:
    # Hydra's quoted strings inside a list are not YAML ('[coding]' ends a flow scalar early).
    effect = "server.simulated.effects=[{match:{a:b},prompt_contains:'[coding]',x:1}]"
    out = apply_overrides({"variant": "fa3"}, [effect, "backend=fmha_v2"])
    assert out["variant"] == "fmha_v2"
