"""Judging accuracy and accept length: pairing, the checks of a cell, their kinds and verdicts.

Never imports ``speed``, ``assemble`` or ``write`` (``tests/unit/test_layering.py``).
"""
