"""The simulated server's SGLang defaults file is what its script builds from the recordings."""

from __future__ import annotations

import pytest

from pipeline.simserver import sglang_defaults
from tests.helpers import simserver_defaults


@pytest.mark.parametrize("release", simserver_defaults.RELEASES)
def test_the_committed_defaults_file_is_what_the_recordings_build(release):
    path = simserver_defaults.defaults_file(release)
    assert sglang_defaults.defaults_file(release) == path
    assert path.read_text(encoding="utf-8") == simserver_defaults.text(release), (
        "stale: run .venv/bin/python -m tests.helpers.simserver_defaults --write"
    )


@pytest.mark.parametrize(
    ("release", "n_args", "top_only", "state_only"),
    [
        ("0.5.19", 487, ["custom_sigquit_handler"], set()),
        (
            "0.5.23", 546, ["custom_sigquit_handler", "hicache_object_layout"],
            {"decode_cuda_graph_bs", "decode_cuda_graph_memory_gb"},
        ),
    ],
)  # fmt: skip
def test_the_defaults_put_back_what_the_recorded_launch_set(release, n_args, top_only, state_only):
    built = simserver_defaults.build(release)
    recorded = built["server_args"]
    assert recorded["model_path"] is None and recorded["speculative_attention_mode"] == "prefill"
    assert recorded["enable_metrics"] is False and recorded["speculative_algorithm"] is None
    assert len(recorded) == n_args  # every server argument of that release
    assert (built["top_level_only"], set(built["state_only"])) == (top_only, state_only)
    assert "SGLANG_EXPOSE_OWN_ENV_VARS" not in built["env_vars_set_by_sglang"]


def test_a_launch_flag_the_recording_lacks_is_named(monkeypatch):
    monkeypatch.setitem(simserver_defaults.LAUNCH_SET, "0.5.23", {"no_such_flag": None})
    with pytest.raises(ValueError, match=r"LAUNCH_SET\['0.5.23'\] names \['no_such_flag'\]"):
        simserver_defaults.build("0.5.23")


def test_each_imitated_release_is_one_table_entry():
    from pipeline.simserver.args import build_parser
    from pipeline.simserver.info import server_args
    from pipeline.simserver.surface import SUPPORTED_VERSIONS, surface_for

    assert SUPPORTED_VERSIONS == ("0.5.19", "0.5.23")
    for version in SUPPORTED_VERSIONS:
        surface = surface_for(version)
        kv = next(a for a in build_parser(version)._actions if a.dest == "kv_cache_dtype")
        assert tuple(kv.choices or ()) == surface.kv_cache_dtypes
        args = server_args({}, {}, version)
        recorded = sglang_defaults.defaults_for(version).server_args
        assert set(args) == {*recorded, "cuda_graph_config"}
    assert "speculative_skip_dp_mlp_sync" not in server_args({}, {}, "0.5.23")  # 0.5.23 dropped it


def test_a_release_the_server_does_not_imitate_is_named():
    from pipeline.simserver.surface import surface_for

    with pytest.raises(ValueError, match=r"imitates SGLang 0\.5\.19, 0\.5\.23, not 0\.5\.21"):
        surface_for("0.5.21")
