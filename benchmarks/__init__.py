"""The benchmarks and the live-run tooling, one package (issue 38).

Run every script as a module from the repository root, e.g. ``python -m
benchmarks.signoff_simulation --write``: the scripts import each other and the project as
``benchmarks.x`` / ``pipeline.x``, and ``-m`` puts the root on ``sys.path``. Tests import them
the same way. Nothing in ``pipeline``, ``backends`` or ``evals`` imports this package.
"""
