import pytest

from pipeline.serving.multinode import first_host, node_plan


@pytest.mark.parametrize(
    ("nodelist", "host"),
    [
        ("gpu[03-04]", "gpu03"),
        ("gpu[03-04,07],cpu1", "gpu03"),
        ("node7,node8", "node7"),
        ("a100-x[001,005]", "a100-x001"),
        ("single", "single"),
    ],
)
def test_first_host(nodelist, host):
    assert first_host(nodelist) == host


def test_single_node_needs_no_plan():
    assert node_plan(1, {}) is None


def test_two_nodes_under_slurm():
    env = {"SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_JOB_NODELIST": "gpu[10-11]"}
    plan = node_plan(2, env)
    assert plan is not None and not plan.serves_evals
    assert plan.args() == ["--nnodes", "2", "--node-rank", "1", "--dist-init-addr", "gpu10:20000"]


def test_several_nodes_outside_slurm_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cluster\.nodes=2 needs a SLURM job of 2 tasks"):
        node_plan(2, {})
