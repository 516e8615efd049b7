# Log snippets are SGLang's real line shapes, kept whole: long lines are data here.
# ruff: noqa: E501
from __future__ import annotations

import pytest

from backends.startup_failure import StartupFailure, classify_startup_log

PROLOGUE = """\
[2026-11-29 10:00:00] 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.
[2026-11-29 10:00:01] server_args=ServerArgs(model_path='/models/m', attention_backend='trtllm_mha', ...)
"""
SCHEDULER_START = """\
[2026-11-29 10:00:05 TP0] Init torch distributed begin.
[2026-11-29 10:00:06 TP0] Init torch distributed ends. mem usage=0.00 GB
[2026-11-29 10:00:09 TP0] Load weight begin. avail mem=138.10 GB
"""
SIGQUIT = "[2026-11-29 10:01:30] Received sigquit from a child process. It usually means the child failed.\n"

ARGPARSE = """\
usage: sglang serve [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]
sglang serve: error: argument --attention-backend: invalid choice: 'fmha_v2' (choose from 'triton', 'fa3', 'flashinfer', 'trtllm_mha')
"""
UNRECOGNIZED = """\
usage: launch_server.py [-h] --model-path MODEL_PATH
launch_server.py: error: unrecognized arguments: --mamba-scheduler-strategy no_buffer
"""
LAUNCHER_VALUE_ERROR = (
    PROLOGUE
    + """\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/opt/sglang/python/sglang/launch_server.py", line 32, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/opt/sglang/python/sglang/srt/arg_groups/attention_hook.py", line 121, in handle_attention_backend_compatibility
    raise ValueError(
ValueError: TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. Please use a different prefill backend.
"""
)
LAUNCHER_BARE_ASSERT = (
    PROLOGUE
    + """\
Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/arg_groups/speculative_hook.py", line 88, in _handle_eagle_family
    assert cfg.speculative_eagle_topk is None and cfg.speculative_num_draft_tokens is None
AssertionError
"""
)
FA3_CRASH = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:00:31 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/opt/sglang/python/sglang/srt/layers/attention/attention_registry.py", line 120, in create_flashattention_v3_backend
    assert (
AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`.

"""
    + SIGQUIT
)
XQA_CRASH = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:01:10 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=60.1 GB
[2026-11-29 10:01:29 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 1024, in capture_one_batch_size
  File "/usr/lib/python3.12/site-packages/flashinfer/xqa.py", line 300, in xqa
    assert mask is not None, "Mask is required for speculative decoding"
AssertionError: Mask is required for speculative decoding

"""
    + SIGQUIT
)
# The last 50 lines of a real log (SGLang 0.5.23, H200, 2026-12-01: an EAGLE3 draft whose config
# says float16 under a bfloat16 target): the tail starts inside the traceback, and the capture
# failure is a bare Exception chained after the RuntimeError.
DRAFT_DTYPE_TAIL = """\
  File "/tmp/sgl-site/sglang/srt/layers/quantization/unquant.py", line 614, in apply
    return F.linear(x, layer.weight, bias)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/sgl-site/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py", line 296, in __init__
    raise Exception(
Exception: Capture cuda graph failed: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)
3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)
Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose

[2026-12-01 18:14:26] Received sigquit from a child process. It usually means the child failed.
[2026-12-01 18:14:26] kill_process_tree called: parent_pid=1751, include_parent=True, pid=1751
"""
CUDA_OOM = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:01:29 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/model_executor/model_runner.py", line 700, in load_model
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.72 GiB of which 1.02 GiB is free.

"""
    + SIGQUIT
)
POOL_OOM = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:01:29 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", line 300, in init_memory_pool
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.

"""
    + SIGQUIT
)
DETOKENIZER = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:01:40] DetokenizerManager hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/managers/detokenizer_manager.py", line 310, in run_detokenizer_process
KeyError: 'qwen3_next'

"""
    + SIGQUIT
)
WARMUP = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:02:00] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
[2026-11-29 10:12:00] Initialization failed. warmup error: Timeout while waiting for the warmup request
"""
)
SIGQUIT_ONLY = PROLOGUE + SCHEDULER_START + SIGQUIT
STILL_CAPTURING = (
    PROLOGUE
    + SCHEDULER_START
    + """\
[2026-11-29 10:01:10 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=60.1 GB
"""
)


@pytest.mark.parametrize(
    ("log", "exit_code", "timed_out", "expected"),
    [
        (
            ARGPARSE,
            2,
            False,
            StartupFailure(
                "rejected_config",
                "sglang serve: error: argument --attention-backend: invalid choice: 'fmha_v2' "
                "(choose from 'triton', 'fa3', 'flashinfer', 'trtllm_mha')",
            ),
        ),
        (
            UNRECOGNIZED,
            2,
            False,
            StartupFailure(
                "rejected_config",
                "launch_server.py: error: unrecognized arguments: --mamba-scheduler-strategy no_buffer",
            ),
        ),
        (
            LAUNCHER_VALUE_ERROR,
            1,
            False,
            StartupFailure(
                "rejected_config",
                "ValueError: TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), "
                "or SM120 GPUs. Please use a different prefill backend.",
            ),
        ),
        (
            LAUNCHER_BARE_ASSERT,
            1,
            False,
            StartupFailure(
                "rejected_config",
                "AssertionError (assert cfg.speculative_eagle_topk is None and "
                "cfg.speculative_num_draft_tokens is None)",
            ),
        ),
        (
            FA3_CRASH,
            1,
            False,
            StartupFailure(
                "crash",
                "AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. "
                "Please use `--attention-backend flashinfer`.",
            ),
        ),
        (
            XQA_CRASH,
            1,
            False,
            StartupFailure("crash", "AssertionError: Mask is required for speculative decoding"),
        ),
        (
            DRAFT_DTYPE_TAIL,
            -9,
            False,
            StartupFailure(
                "crash",
                "Exception: Capture cuda graph failed: expected mat1 and mat2 to have the same "
                "dtype, but got: float != c10::Half",
            ),
        ),
        (
            CUDA_OOM,
            1,
            False,
            StartupFailure(
                "oom",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                "total capacity of 139.72 GiB of which 1.02 GiB is free.",
            ),
        ),
        (
            POOL_OOM,
            1,
            False,
            StartupFailure(
                "oom",
                "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            ),
        ),
        (DETOKENIZER, 1, False, StartupFailure("crash", "KeyError: 'qwen3_next'")),
        (
            WARMUP,
            1,
            False,
            StartupFailure(
                "crash",
                "[2026-11-29 10:12:00] Initialization failed. warmup error: "
                "Timeout while waiting for the warmup request",
            ),
        ),
        (SIGQUIT_ONLY, 1, False, StartupFailure("crash", SIGQUIT.strip())),
        # Evidence in the log wins over the caller giving up.
        (
            FA3_CRASH,
            None,
            True,
            StartupFailure(
                "crash",
                "AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. "
                "Please use `--attention-backend flashinfer`.",
            ),
        ),
        (
            STILL_CAPTURING,
            None,
            True,
            StartupFailure(
                "timeout",
                "not ready before the timeout; last line: [2026-11-29 10:01:10 TP0] Capture cuda graph "
                "begin. This can take up to several minutes. avail mem=60.1 GB",
            ),
        ),
        (
            PROLOGUE + "Killed\n",
            -9,
            False,
            StartupFailure("unknown", "exit code -9; last line: Killed"),
        ),
        ("", 1, False, StartupFailure("unknown", "exit code 1; last line: (empty log)")),
    ],
)
def test_classify_startup_log(
    log: str, exit_code: int | None, timed_out: bool, expected: StartupFailure
) -> None:
    assert classify_startup_log(log, exit_code, timed_out) == expected


def test_value_error_after_scheduler_start_is_not_a_config_rejection() -> None:
    log = PROLOGUE + SCHEDULER_START + "ValueError: bad weight shape\n"
    assert classify_startup_log(log, 1, False).kind == "unknown"


def test_long_lines_are_cut() -> None:
    log = "ValueError: " + "x" * 2000 + "\n"
    message = classify_startup_log(log, 1, False).message
    assert len(message) == 500 and message.endswith("...")
