"""``mtp-eval-report``: judge cell folders against the baseline variant and references.

Reads only what cells wrote (``result.json``, ``samples/*.jsonl``, Hydra's ``multirun.yaml`` and
``.hydra/overrides.yaml``), never a live process. Statistics live in ``pipeline.stats``.
"""
