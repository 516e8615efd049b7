"""Measuring: run the evals against the server and gather accept statistics per eval window."""
