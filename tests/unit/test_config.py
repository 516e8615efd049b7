"""Every config option composes against the schema, and a mistyped key fails at compose time."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigKeyError, ValidationError

from pipeline.config.cell_config import to_cell_config
from pipeline.config.schema import RootConf, register_configs

CONF = Path(__file__).resolve().parents[2] / "conf"
register_configs()


def options(group):
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def compose_cell(overrides, return_hydra_config=False):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=return_hydra_config)


@pytest.mark.parametrize(
    "override",
    [
        f"{g}={o}"
        for g in ("model", "backend", "kv_dtype", "gpu", "server", "client")
        for o in options(g)
    ]
    + [f"evals=[{o}]" for o in options("evals")],
)
def test_every_option_composes_into_typed_config(override):
    conf = to_cell_config(compose_cell([override]))
    assert isinstance(conf, RootConf)


def test_default_is_simulated_with_bundled_sample():
    conf = to_cell_config(compose_cell([]))
    assert conf.server.kind == "simulated"
    assert list(conf.evals) == ["mcq_sample"]
    assert conf.evals["mcq_sample"].dataset.source == "bundled"


def test_several_evals_at_once():
    conf = to_cell_config(compose_cell(["evals=[mcq_sample,gpqa_diamond]"]))
    assert set(conf.evals) == {"mcq_sample", "gpqa_diamond"}
    assert conf.evals["gpqa_diamond"].dataset.subset == "gpqa_diamond"


def test_skip_softmax_factors_are_plain_numbers():
    conf = to_cell_config(compose_cell(["skip_softmax.prefill=0.5", "skip_softmax.decode=0"]))
    assert conf.skip_softmax.prefill == 0.5 and conf.skip_softmax.decode == 0.0


@pytest.mark.parametrize(
    "override",
    ["backend.attention_bakend=fa3", "model.speculative.num_step=3", "server.startup_timeout=5"],
)
def test_typo_in_key_fails_at_compose(override):
    with pytest.raises((ConfigCompositionException, ConfigKeyError)) as info:
        compose_cell([override])
    assert override.split("=")[0].lstrip("+").split(".")[-1] in str(info.value) + str(
        info.value.__cause__
    )


def test_wrong_type_fails_at_compose():
    with pytest.raises((ConfigCompositionException, ValidationError)):
        compose_cell(["model.tp=two"])


def test_demo_experiment_is_a_multirun_over_variants_and_kv_dtypes():
    cfg = compose_cell(["experiment=demo"], return_hydra_config=True)
    assert cfg.hydra.mode.name == "MULTIRUN"
    assert dict(cfg.hydra.sweeper.params) == {"backend": "fmha_v2,fa3", "kv_dtype": "auto,fp8_e4m3"}


def test_typo_in_a_yaml_file_names_the_key_and_file(tmp_path):
    import shutil

    conf_dir = tmp_path / "conf"
    shutil.copytree(CONF, conf_dir)
    (conf_dir / "model" / "bad.yaml").write_text(
        "name: x\npath: y\nspeculativ:\n  algorithm: EAGLE\n"
    )
    with (
        initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"),
        pytest.raises(ConfigCompositionException) as info,
    ):
        compose("config", overrides=["model=bad"])
    assert "model/bad" in str(info.value) and "speculativ" in str(info.value)


@pytest.mark.parametrize("launcher", ["slurm", "local"])
def test_launcher_presets_take_resources_from_model_and_cluster(launcher):
    from omegaconf import OmegaConf

    cfg = compose_cell(
        [f"hydra/launcher={launcher}", "model=llama3_1_8b_eagle3", "cluster.time_min=90"],
        return_hydra_config=True,
    )
    cfg.hydra.sweep.dir = "/tmp/sweep"  # normally set by Hydra at run time
    launcher_cfg = OmegaConf.to_container(cfg.hydra.launcher, resolve=True)
    assert launcher_cfg["timeout_min"] == 90
    assert launcher_cfg["submitit_folder"] == "/tmp/sweep/.submitit/%j"
    if launcher == "slurm":
        assert launcher_cfg["gpus_per_node"] == cfg.model.tp
        assert launcher_cfg["_target_"].endswith("SlurmLauncher")


@pytest.mark.parametrize(
    ("override", "listed"), [("backend=fa4", "fmha_v2"), ("model=llama4", "tiny_sim")]
)
def test_unknown_option_lists_the_valid_ones(override, listed):
    with pytest.raises(ConfigCompositionException) as info:
        compose_cell([override])
    assert "Available options" in str(info.value) and listed in str(info.value)


def test_real_sglang_start_is_timed_to_the_second() -> None:
    import yaml

    path = Path(__file__).resolve().parents[2] / "conf/server/sglang.yaml"
    conf = yaml.safe_load(path.read_text())
    assert conf["health_poll_max_s"] <= 1.0  # launch-to-ready comparisons of warm starts need it
