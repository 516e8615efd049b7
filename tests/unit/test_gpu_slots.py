import pytest

from pipeline.serving.gpu_slots import cell_devices, server_devices, visible_devices

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
