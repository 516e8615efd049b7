import pytest

from pipeline.cluster.multinode import first_host, node_plan
from pipeline.config.schema import gpus_per_node


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


def test_two_nodes_as_two_tasks_on_one_host_under_submitit_local():
    env = {
        "SUBMITIT_EXECUTOR": "local",
        "SUBMITIT_LOCAL_NTASKS": "2",
        "SUBMITIT_LOCAL_GLOBALID": "1",
        "SUBMITIT_LOCAL_LOCALID": "1",
    }
    plan = node_plan(2, env)
    assert plan is not None and plan.node_rank == 1 and plan.local_rank == 1
    assert plan.args()[-1] == "127.0.0.1:20000"


def test_slurm_tasks_sharing_a_node_take_their_local_id():
    env = {"SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_LOCALID": "1"}
    env["SLURM_JOB_NODELIST"] = "n1"
    plan = node_plan(2, env)
    assert plan is not None and (plan.node_rank, plan.local_rank) == (1, 1)


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"SLURM_NTASKS": "1", "SLURM_PROCID": "0"},  # a job of the wrong size
        {
            "SUBMITIT_EXECUTOR": "local",
            "SUBMITIT_LOCAL_NTASKS": "1",
            "SUBMITIT_LOCAL_GLOBALID": "0",
        },
    ],
)
def test_several_nodes_outside_a_job_of_that_many_tasks_is_a_clear_error(env):
    with pytest.raises(ValueError, match=r"cluster\.nodes=2 needs a job of 2 tasks"):
        node_plan(2, env)


@pytest.mark.parametrize(("tp", "nodes", "per_node"), [(2, 1, 2), (2, 2, 1), (8, 2, 4), (1, 1, 1)])
def test_gpus_per_node(tp, nodes, per_node):
    assert gpus_per_node(tp, nodes) == per_node


@pytest.mark.parametrize(("tp", "nodes"), [(1, 2), (3, 2), (2, 0)])
def test_nodes_that_do_not_divide_tp_are_refused_with_an_example(tp, nodes):
    with pytest.raises(ValueError, match=rf"cluster\.nodes={nodes} must divide model\.tp={tp}"):
        gpus_per_node(tp, nodes)
