"""The simulated server's SGLang defaults file is what its script builds from the recordings."""

from __future__ import annotations

from pipeline.simserver import sglang_defaults
from tests.helpers import simserver_defaults


def test_the_committed_defaults_file_is_what_the_recordings_build():
    assert sglang_defaults.DEFAULTS_FILE == simserver_defaults.DEFAULTS_FILE
    committed = simserver_defaults.DEFAULTS_FILE.read_text(encoding="utf-8")
    assert committed == simserver_defaults.text(), (
        "stale: run .venv/bin/python -m tests.helpers.simserver_defaults --write"
    )


def test_the_defaults_put_back_what_the_recorded_launch_set():
    recorded = simserver_defaults.build()["server_args"]
    assert recorded["model_path"] is None and recorded["speculative_attention_mode"] == "prefill"
    assert len(sglang_defaults.SERVER_ARGS_0_5_19) == 487  # every server argument of 0.5.19


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
        assert not set(surface.removed_server_args) & set(args)
        assert len(args) == len(sglang_defaults.SERVER_ARGS_0_5_19) + 1 - len(
            surface.removed_server_args
        )  # + cuda_graph_config


def test_a_release_the_server_does_not_imitate_is_named():
    import pytest

    from pipeline.simserver.surface import surface_for

    with pytest.raises(ValueError, match=r"imitates SGLang 0\.5\.19, 0\.5\.23, not 0\.5\.21"):
        surface_for("0.5.21")
