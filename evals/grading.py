"""Pure answer extraction from a model's final answer text (``content``, never reasoning).

Multiple choice: every pattern is searched over the whole text and the match whose letter sits
LAST in the text wins, whichever pattern found it. simple-evals takes the first ``Answer:``
match; NeMo-Skills and sgl-eval take the last. A model that reconsiders ("Answer: B ... wait,
Answer: C") means its final line, which is what the prompt asks for, so the last one is graded.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Markdown emphasis, brackets, maths delimiters and LaTeX wrappers that may sit around a letter.
_WRAP = r"(?:[\s*_$(\[{]|\\(?:text|textbf|mathrm|mathbf|boxed)\s*\{|\\\()*"
_END = r"(?![A-Za-z0-9])"


@lru_cache(maxsize=16)
def _letter_patterns(letters: str) -> tuple[re.Pattern[str], ...]:
    cls = "[" + re.escape(letters) + "]"
    keyword = r"(?i:\banswer)[*_\s]{0,4}:[*_]{0,2}" + _WRAP + "(" + cls + ")" + _END
    final_is = r"(?i:\b(?:final\s+)?answer\s+is)[*_:\s]{0,4}" + _WRAP + "(" + cls + ")" + _END
    boxed = (
        r"\\boxed\s*\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?[(\[]?\s*(" + cls + ")" + _END
    )
    return tuple(re.compile(p) for p in (keyword, final_is, boxed))


def extract_mcq_letter(text: str | None, letters: str = "ABCD") -> str | None:
    r"""Extract the chosen option letter from a multiple-choice answer.

    Handles ``Answer: X``, ``**Answer:** X``, ``Answer: (X)``, ``\boxed{X}``,
    ``\boxed{\text{X}}``, "The final answer is X" and Markdown emphasis around the letter.

    Args:
        text: the response's ``content``; None or empty gives None.
        letters: the valid option letters, upper case ("ABCD"; "ABCDEFGHIJ" for MMLU-Pro).

    Returns:
        The letter that appears last in the text under any pattern, or None.
    """
    if not text or not letters:
        return None
    best: tuple[int, str] | None = None
    for pattern in _letter_patterns(letters):
        for match in pattern.finditer(text):
            if best is None or match.start(1) > best[0]:
                best = (match.start(1), match.group(1))
    return best[1] if best else None


_NUMBER = r"[-+]?(?:\$ ?)?[0-9][0-9,]*(?:\.[0-9]+)?"
_NUMBER_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"####\s*(" + _NUMBER + ")",
        r"(?i:\bfinal\s+answer\s+is)[*_:\s]{0,4}\$?(?:\\boxed\{)?(" + _NUMBER + ")",
        r"(?i:\banswer)[*_\s]{0,4}:[*_\s]{0,4}(" + _NUMBER + ")",
        r"\\boxed\s*\{\s*(" + _NUMBER + ")",
    )
)
_ANY_NUMBER = re.compile(_NUMBER)


def normalize_number(raw: str) -> str | None:
    """Normalize a number as written ("$1,234.00" -> "1234", "+7" -> "7", "-0.50" -> "-0.5").

    Args:
        raw: the matched number text.

    Returns:
        The canonical string, or None if no digits remain.
    """
    text = "".join(raw.split()).replace(",", "").replace("$", "").lstrip("+")
    negative = text.startswith("-")
    text = text.lstrip("-")
    if not any(ch.isdigit() for ch in text):
        return None
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    text = text.lstrip("0") or "0"
    if text.startswith("."):
        text = "0" + text
    return "-" + text if negative and text != "0" else text


def extract_number(text: str | None) -> str | None:
    r"""Extract a GSM8K-style numeric answer.

    ``#### 42``, "The final answer is 1,234", ``Answer: 42`` and ``\boxed{42}`` are searched
    and the last match by position wins; without any, the last number in the text is taken.

    Args:
        text: the response's ``content``.

    Returns:
        The normalized number (see ``normalize_number``) or None.
    """
    if not text:
        return None
    best: tuple[int, str] | None = None
    for pattern in _NUMBER_PATTERNS:
        for match in pattern.finditer(text):
            if best is None or match.start(1) > best[0]:
                best = (match.start(1), match.group(1))
    if best is None:
        numbers = _ANY_NUMBER.findall(text)
        best = (0, numbers[-1]) if numbers else None
    return normalize_number(best[1]) if best else None
