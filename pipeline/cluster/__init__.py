"""Sweeps: skip finished cells on resume, stop repeats early, summarise a multirun."""
