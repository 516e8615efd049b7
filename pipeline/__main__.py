"""``python -m pipeline`` runs the ``mtp-eval`` app."""

from pipeline.cli import main

main()
