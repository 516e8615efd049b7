r"""Whether a reply that does not parse stopped where a cut would leave it (pure).

A cut falls on any byte. The JSON parser names the place it gave up, and that is the end of the
bytes only sometimes: inside ``null`` / ``true`` / ``false`` it names the literal's start
("Expecting value"), after a number's ``.`` or ``e`` the character it could not take ("Expecting
',' delimiter"), inside a ``\uXXXX`` escape the escape's ``u``. Each of those is a prefix of a
valid document, so a retry can cure it; a body that is whole but wrong is not, and stays
malformed. Likewise UTF-8: a body cut inside a multi-byte character ends "unexpectedly", one that
is not UTF-8 fails before its end.
"""

from __future__ import annotations

import json
import re

_LITERALS = ("true", "false", "null")
# A prefix of a JSON number that can still grow into one: "-", "12.", "1.5e", "1e+", "0.25".
_NUMBER_PREFIX = re.compile(r"-?(?:(?:0|[1-9]\d*)(?:\.\d*|(?:\.\d+)?[eE][-+]?\d*)?)?")
# The tail of a string cut inside an escape: "u", "u00", "ud83d\" or "ud83d\ud8" (a pair).
_ESCAPE_PREFIX = re.compile(r"u[0-9a-fA-F]{0,4}(?:\\(?:u[0-9a-fA-F]{0,4})?)?")
_TOKEN_TAIL = re.compile(r"[-+.0-9A-Za-z]+\Z")


def cut_json(exc: json.JSONDecodeError, text: str) -> bool:
    """True when ``text`` failed to parse only because it stops before its document ends.

    Args:
        exc: the error ``json.loads(text)`` raised.
        text: the text that was parsed.
    """
    end = len(text.rstrip())
    if exc.pos >= end or exc.msg.startswith("Unterminated string"):
        return True  # at the very end, or in a string never closed (the pos names its start)
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        return _ESCAPE_PREFIX.fullmatch(text, exc.pos, end) is not None
    return _cut_token(text[:end], exc.pos)


def _cut_token(text: str, pos: int) -> bool:
    # The last token a cut left short: the parser gave up inside it, and it can still grow into a
    # literal or a number. A whole token there ("nulx", "1.}") is a broken body.
    tail = _TOKEN_TAIL.search(text)
    if tail is None or tail.start() > pos:
        return False
    token = tail.group()
    if any(word.startswith(token) for word in _LITERALS):
        return True
    return _NUMBER_PREFIX.fullmatch(token) is not None


def cut_utf8(exc: UnicodeDecodeError, raw: bytes) -> bool:
    """True when ``raw`` is UTF-8 that stops inside its last character (a cut, not bad bytes)."""
    return exc.reason == "unexpected end of data" and exc.end >= len(raw)
