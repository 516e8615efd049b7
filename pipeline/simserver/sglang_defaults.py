"""SGLang 0.5.19's resolved server arguments and live figures, as ``/server_info`` reports them.

The data is ``sglang_0.5.19.json`` beside this module, built from a live 0.5.19 server's recorded
responses (``tests/data/live-sglang-0.5.19/``) by ``tests/helpers/simserver_defaults.py``, with
the flags that launch set put back to their parser defaults; a test holds the file to that build.
The simulated server starts from this table so that ``/server_info`` carries every key real
SGLang does; ``resolve`` overwrites the flags it understands. ``cuda_graph_config`` is built in
``info`` because it depends on the flags.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

DEFAULTS_FILE = Path(__file__).with_name("sglang_0.5.19.json")
_DATA: Final[dict[str, Any]] = json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))

SERVER_ARGS_0_5_19: Final[dict[str, Any]] = _DATA["server_args"]
# internal_states[i]["memory_usage"] of the live server (GiB and tokens).
MEMORY_USAGE: Final[dict[str, Any]] = _DATA["memory_usage"]
# /server_info "startup_time" of the live server (seconds).
STARTUP_TIME: Final[dict[str, Any]] = _DATA["startup_time"]
CUDA_GRAPH_DECODE_BS: Final[list[int]] = _DATA["cuda_graph_bs"]["decode"]
CUDA_GRAPH_PREFILL_BS: Final[list[int]] = _DATA["cuda_graph_bs"]["prefill"]
# /model_info "embedding" block of a generative model (the live server's, unchanged).
MODEL_INFO_EMBEDDING: Final[dict[str, Any]] = _DATA["model_info_embedding"]
