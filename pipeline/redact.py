"""Secrets never reach result.json, logs or reports: tokens, API keys and passwords are masked."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

MASK = "***"
_SECRET_NAME = re.compile(r"(TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_SECRET_FLAGS = ("--api-key", "--admin-api-key", "--hf-token")


def is_secret_name(name: str) -> bool:
    """True for variable names such as HF_TOKEN, OPENAI_API_KEY or DB_PASSWORD."""
    return bool(_SECRET_NAME.search(name))


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """Copy of ``env`` with the values of secret-looking names masked."""
    return {k: (MASK if is_secret_name(k) and v else v) for k, v in env.items()}


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Copy of ``argv`` with the values of secret flags masked (both ``--f v`` and ``--f=v``)."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
        elif arg in _SECRET_FLAGS:
            out.append(arg)
            hide_next = True
        elif arg.split("=", 1)[0] in _SECRET_FLAGS and "=" in arg:
            out.append(arg.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(arg)
    return out


def redact_text(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every occurrence of the given secret values masked."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    return text
