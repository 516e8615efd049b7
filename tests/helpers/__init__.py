"""Helpers shared by several test modules (functions and classes; fixtures live in conftest)."""
