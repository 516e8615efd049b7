import pytest

from pipeline.cluster.gpu_slots import (
    cell_devices,
    gpus_setting,
    node_devices,
    server_devices,
    visible_devices,
)

EIGHT = [str(i) for i in range(8)]


@pytest.mark.parametrize(
    ("job", "tp", "visible", "expected"),
    [
        (0, 1, EIGHT, ["0"]),
        (7, 1, EIGHT, ["7"]),
        (8, 1, EIGHT, ["0"]),  # wraps: job 8 waits for slot 0's devices
        (0, 4, EIGHT, ["0", "1", "2", "3"]),
        (1, 4, EIGHT, ["4", "5", "6", "7"]),
        (2, 4, EIGHT, ["0", "1", "2", "3"]),
        (1, 2, ["3", "5", "6", "7"], ["6", "7"]),  # respects an outer CUDA_VISIBLE_DEVICES
    ],
)
def test_cell_devices(job, tp, visible, expected):
    assert cell_devices(job, tp, visible) == expected


def test_too_few_devices_names_the_key():
    with pytest.raises(ValueError, match=r"model\.tp=8 needs 8 GPUs but 4"):
        cell_devices(0, 8, EIGHT[:4])


@pytest.mark.parametrize(
    ("setting", "env", "expected"),
    [
        (None, {}, None),
        ("2,3", {}, "2,3"),
        ("auto", {}, "2,3"),
        ("auto", {"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, "6,7"),
    ],
)
def test_server_devices(setting, env, expected):
    assert server_devices(setting, job_num=1, tp=2, env=env, gpu_count=8) == expected


def test_visible_devices_defaults_to_all():
    assert visible_devices({}, 2) == ["0", "1"]
    assert visible_devices({"CUDA_VISIBLE_DEVICES": ""}, 2) == ["0", "1"]


@pytest.mark.parametrize(
    ("local_rank", "per_node", "visible", "expected"),
    [
        (0, 1, ["0", "1"], ["0"]),  # two SGLang nodes on one host: one GPU each
        (1, 1, ["0", "1"], ["1"]),
        (1, 2, EIGHT, ["2", "3"]),
        (0, 4, ["0", "1", "2", "3"], ["0", "1", "2", "3"]),  # a cluster node alone on its host
        (1, 1, ["4", "6"], ["6"]),  # respects an outer CUDA_VISIBLE_DEVICES
    ],
)
def test_node_devices(local_rank, per_node, visible, expected):
    assert node_devices(local_rank, per_node, visible) == expected


def test_a_node_never_wraps_onto_another_nodes_gpu():
    with pytest.raises(ValueError, match=r"node 1 on this host needs GPUs 1\.\.1 .* 1 are visible"):
        node_devices(1, 1, ["0"])


def test_server_devices_for_a_node_use_its_place_on_the_host_not_the_job_number():
    node1 = server_devices("auto", job_num=0, tp=2, env={}, gpu_count=2, node=(1, 1))
    assert node1 == "1"
    assert server_devices(None, job_num=0, tp=2, env={}, gpu_count=2, node=(1, 1)) is None


@pytest.mark.parametrize(
    ("setting", "sees_env", "env", "applied"),
    [
        (None, True, {"CUDA_VISIBLE_DEVICES": ""}, "auto"),  # submitit_local with no GPUs given
        (None, True, {"CUDA_VISIBLE_DEVICES": "0"}, None),
        (None, True, {}, None),
        (None, False, {"CUDA_VISIBLE_DEVICES": ""}, None),  # simulated, docker or external server
        ("2,3", True, {"CUDA_VISIBLE_DEVICES": ""}, "2,3"),  # what the user set wins
    ],
)
def test_an_inherited_empty_device_list_becomes_gpus_auto(setting, sees_env, env, applied):
    assert gpus_setting(setting, sees_env, env) == applied
