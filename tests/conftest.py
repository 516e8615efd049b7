"""Shared fixtures: compose a cell config like the CLI does, and check for leftover processes."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from hydra import compose, initialize_config_dir

from pipeline.schema import RootConf, register_configs, to_cell_config

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
register_configs()


def compose_conf(overrides: list[str]) -> RootConf:
    """The typed config the CLI would build from these overrides."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return to_cell_config(compose("config", overrides=overrides))


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Live processes whose command line contains ``text`` (e.g. a cell folder)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(text in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def fast_sim() -> list[str]:
    """Overrides that make the simulated server and the client quick for tests."""
    return [
        "server.simulated.startup_delay_s=0.2",
        "client.progress=false",
        "server.stop_grace_s=5",
        "server.startup_timeout_s=30",
    ]
