"""``python -m pipeline`` runs the ``mtp-eval`` app."""

from pipeline.cli.app import main

main()
