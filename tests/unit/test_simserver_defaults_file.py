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
