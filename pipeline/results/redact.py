"""Secrets never reach result.json, logs or reports: tokens, API keys and passwords are masked."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

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


def redact_tree(root: Path, secrets: Sequence[str], max_bytes: int = 64 << 20) -> list[Path]:
    """Mask secret values in every text file under ``root`` (server logs print their argv).

    Returns:
        The files that held a secret.
    """
    live = [s.encode() for s in secrets if s and len(s) >= 4]
    changed: list[Path] = []
    if not live:
        return changed
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.stat().st_size > max_bytes:
            continue
        data = path.read_bytes()
        if any(s in data for s in live):
            for s in live:
                data = data.replace(s, MASK.encode())
            path.write_bytes(data)
            changed.append(path)
    return changed
