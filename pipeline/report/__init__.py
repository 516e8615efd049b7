"""``mtp-eval-report``: judge cell folders against the baseline variant and references.

Reads only what cells wrote (``result.json``, ``samples/*.jsonl``, Hydra's ``multirun.yaml`` and
``.hydra/overrides.yaml``), never a live process. Statistics live in ``pipeline.stats``. One room
per job, each importing only those before it: ``load`` (what is read), ``judge`` (pairing,
checks, verdicts), ``speed`` (ratios, A/A bands, speed checks, costs, frontiers), ``assemble``
(the ``Report`` and its gate), ``write`` (the output files); ``cli.py`` is the entry point.
"""
