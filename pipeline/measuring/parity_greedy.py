"""The losslessness arm's data (issue 39 item 3): greedy outputs of the parity prompts.

With ``parity.greedy_sequences`` N, every parity cell generates from its first N prompts at
temperature 0 and keeps the ids in ``parity/greedy.jsonl``. Speculative decoding is lossless
when a speculative cell's greedy outputs equal those of the same variant with speculation off;
under ``--enable-deterministic-inference`` any difference is a bug (the report names the
request and the first divergent position).
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config.schema import ParityConf
from pipeline.measuring.parity_client import GenerateClient, generate_with_logprobs
from pipeline.results.cell_paths import parity_dir

GREEDY = "greedy.jsonl"


def greedy_phase(
    conf: ParityConf, client: GenerateClient, prompts: list[list[int]], cell_dir: Path
) -> None:
    """``parity/greedy.jsonl``: ``{question, prompt_ids, output_ids}`` at temperature 0."""
    if conf.greedy_sequences <= 0:
        return
    rows = []
    for serial, prompt in enumerate(prompts[: conf.greedy_sequences]):
        out = generate_with_logprobs(client, prompt, conf.new_tokens, 0.0)
        rows.append({"question": f"p{serial}", "prompt_ids": prompt,
                     "output_ids": list(out.output_ids)})  # fmt: skip
    path = parity_dir(cell_dir) / GREEDY
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(path)
