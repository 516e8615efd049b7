"""The cell job reads its plan: what launching reads is decided once, in ``CellPlan.of``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipeline.cell.cell_plan import EXTERNAL_PORT, CellPlan
from tests.helpers.cells import compose_conf

_CELL = Path(__file__).resolve().parents[2] / "pipeline" / "cell"


@pytest.mark.parametrize(
    ("overrides", "port"),
    [
        ([], 0),  # a server the pipeline starts, no port set: a free one, chosen at launch
        (["server.port=31234"], 31234),
        (["server=external", "server.base_url=http://127.0.0.1:9"], EXTERNAL_PORT),
    ],
)
def test_the_launch_options_name_the_port_or_ask_for_a_free_one(
    overrides: list[str], port: int
) -> None:
    assert CellPlan.of(compose_conf(overrides)).launch.options.port == port


def test_the_launch_settings_carry_what_the_job_reads_of_the_config() -> None:
    conf = compose_conf(
        [
            "model.tp=2",
            "cluster.nodes=2",
            "cluster.dist_init_port=20123",
            "server.extra_args=[--x]",
            "dry_run=true",
        ]
    )
    launch = CellPlan.of(conf).launch
    assert (launch.nodes, launch.dist_init_port, launch.dry_run) == (2, 20123, True)
    assert launch.options.extra_args == ("--x",)
    assert (launch.model, launch.backend, launch.gpu) == (conf.model, conf.backend, conf.gpu)


def test_only_run_cell_takes_the_whole_config_in_the_job() -> None:
    # A step that needs a setting gets it from its part of the plan (LaunchSettings, MeasurePlan,
    # CheckPlan), so that mypy shows every step that reads it.
    takers = []
    for name in ("job.py", "launching.py"):
        tree = ast.parse((_CELL / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                if any(a.annotation and "RootConf" in ast.unparse(a.annotation) for a in args):
                    takers.append(f"{name}:{node.name}")
    assert takers == ["job.py:run_cell"]
