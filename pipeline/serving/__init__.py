"""Serving: start, stop and talk to the server; plan and verify what it runs."""
