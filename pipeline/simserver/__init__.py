"""The simulated SGLang server: ``python -m pipeline.simserver <sglang argv> --sim-config FILE``.

It accepts the argv of ``python -m sglang.launch_server``, resolves it as SGLang does, and serves
SGLang's HTTP surface (key names of 0.5.19 or 0.5.23) with a simulated model that answers from an
answer key and draws speculative-decoding statistics. It imports nothing of ``evals`` or the rest
of ``pipeline``: it stands in for a separate program.
"""
