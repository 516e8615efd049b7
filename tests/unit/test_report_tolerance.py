from pathlib import Path

import pytest
import yaml

from pipeline.report.load.tolerance import ToleranceError, load_tolerance, resolve_path


def test_default_policy():
    tol = load_tolerance("default")
    assert (tol.alpha, tol.baseline, tol.multiplicity) == (0.05, "fa3", "holm")
    assert tol.for_eval("gpqa_diamond").max_drop == 0.02
    assert tol.for_eval("mcq_sample").reference_max_drop == 0.10
    assert tol.for_eval("mcq_sample").max_drop == 0.02  # inherits the defaults
    assert tol.for_eval("unknown_eval") == tol.defaults
    assert tol.references
    assert load_tolerance("default", baseline="triton").baseline == "triton"


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"alpha": 0.7}, r"alpha = 0.7 must be in \(0.0, 0.5\)"),
        ({"alpha": "five"}, "alpha = 'five' must be a number"),
        ({"multiplicity": "bonferroni"}, "multiplicity = 'bonferroni'; use one of holm, none"),
        ({"defaults": {"max_drop": 2}}, r"defaults.max_drop = 2.0 must be in \[0.0, 1.0\) \(a"),
        ({"evals": {"gpqa": {"max_dorp": 0.02}}}, r"unknown key evals.gpqa.max_dorp"),
        ({"margin": 0.02}, "unknown key margin"),
        ({"match": ["model", "colour"]}, "match = "),
        ({"reference_variance": "pooled"}, "reference_variance"),
        ({"evals": {"gpqa": 0.02}}, "evals.gpqa: expected a mapping of EvalTolerance keys"),
        ({"evals": {"gpqa": {"max_drop": "lots"}}}, "max_drop = 'lots' must be a"),
        ({"power": 0.3}, r"power = 0.3 must be in \(0.5, 1.0\)"),
    ],
)
def test_bad_policies_name_file_and_key(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(ToleranceError, match=message) as err:
        load_tolerance(str(path))
    assert str(path) in str(err.value)


def test_resolve_path(tmp_path):
    assert resolve_path("default").name == "default.yaml"
    with pytest.raises(ToleranceError, match=r"no conf/tolerance/nope\.yaml"):
        resolve_path("nope")
    with pytest.raises(ToleranceError, match="no such tolerance file"):
        resolve_path(str(tmp_path / "missing.yaml"))


def test_eval_blocks_inherit_the_policy_defaults(tmp_path):
    evals = {"gpqa": {"accept_band": 0.1}}
    path = write(tmp_path, {"defaults": {"max_drop": 0.03}, "evals": evals})
    margins = load_tolerance(str(path)).for_eval("gpqa")
    assert (margins.max_drop, margins.accept_band) == (0.03, 0.1)
