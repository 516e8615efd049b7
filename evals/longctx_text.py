"""Generated haystack text and fitting it to a length in tokens (pure).

The haystack is written here, never downloaded: sentences drawn from small word lists (a grammar
of about 10^10 sentences, so two prompts' lines almost never repeat), coded words for the
frequency task, and the keys, numbers and variable names the tasks hide. ``fit`` fills a prompt
to a length in the served model's tokens (``evals.longctx_tokens``): units are summed by their
own counts, then the whole prompt is counted and units are dropped or added until it lies
within one unit below the length, never above it.
"""

from __future__ import annotations

import bisect
import itertools
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evals.longctx_tokens import TokenCounter

ADJECTIVES = (
    "amber", "bold", "brisk", "calm", "clever", "coral", "crisp", "dusty", "eager", "faint",
    "fancy", "gentle", "golden", "hollow", "humble", "icy", "jolly", "keen", "lively", "lucky",
    "mellow", "misty", "noble", "odd", "pale", "plain", "proud", "quiet", "rapid", "rosy",
    "rusty", "sandy", "shy", "silent", "silver", "sleepy", "smooth", "snowy", "solid", "spicy",
    "steady", "stormy", "sunny", "swift", "tame", "tidy", "tiny", "vast", "velvet", "warm",
    "wild", "windy", "wise", "witty", "young", "zesty", "bright", "cosy", "dark", "early",
)  # fmt: skip
NOUNS = (
    "anchor", "badger", "basket", "beacon", "bridge", "candle", "canyon", "castle", "cedar",
    "comet", "cottage", "crane", "desert", "dragon", "falcon", "fern", "forest", "garden",
    "glacier", "harbor", "hammer", "island", "kettle", "ladder", "lantern", "meadow", "mirror",
    "mountain", "needle", "orchard", "otter", "owl", "palace", "pebble", "pepper", "pillow",
    "planet", "pond", "rabbit", "river", "rocket", "saddle", "shadow", "shell", "spoon",
    "sparrow", "statue", "temple", "thistle", "tiger", "tower", "valley", "violin", "wagon",
    "walnut", "whale", "willow", "window", "wizard", "zebra",
)  # fmt: skip
VERBS = (
    "admires", "borrows", "carries", "chases", "cleans", "counts", "draws", "finds", "follows",
    "greets", "guards", "hides", "keeps", "lifts", "measures", "moves", "paints", "passes",
    "polishes", "praises", "reaches", "repairs", "shares", "sketches", "sorts", "studies",
    "touches", "visits", "watches", "weighs",
)  # fmt: skip
PLACES = (
    "after dawn", "at noon", "before the rain", "by the gate", "in the hall", "in the morning",
    "near the well", "on the hill", "under the bridge", "during the fair", "at dusk",
    "beside the road", "in winter", "across the field", "at the market", "on the shore",
    "in the library", "behind the barn", "after the storm", "before supper",
)  # fmt: skip


def sentence(rng: random.Random) -> str:
    """One filler sentence (``The misty otter paints the calm lantern near the well.``)."""
    adj1, adj2 = rng.choice(ADJECTIVES), rng.choice(ADJECTIVES)
    noun1, noun2 = rng.choice(NOUNS), rng.choice(NOUNS)
    return f"The {adj1} {noun1} {rng.choice(VERBS)} the {adj2} {noun2} {rng.choice(PLACES)}."


def word_key(rng: random.Random) -> str:
    """A needle's key, e.g. ``misty-otter`` (3,600 of them)."""
    return f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"


def distinct(draw: Callable[[], str], count: int) -> list[str]:
    """``count`` distinct values of ``draw``, in the order drawn."""
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen.setdefault(draw(), None)
    return list(seen)


def magic_number(rng: random.Random) -> str:
    """A seven-digit number, as RULER's needles hold."""
    return str(rng.randint(1_000_000, 9_999_999))


def variable_name(rng: random.Random) -> str:
    """Five upper-case letters, as RULER's variable tracking names its variables."""
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(5))


def coded_word(rng: random.Random) -> str:
    """A lower-case nonsense word of 4 to 7 letters (the frequency task's vocabulary)."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 7)))


@dataclass(frozen=True)
class Fitted:
    """A prompt filled to its length: the user message, its tokens and the filler units kept."""

    text: str
    tokens: int
    units: int


MAX_ROUNDS = 12  # count-and-correct rounds; additive counters need one, BPE two or three


def fit(
    compose: Callable[[int], str],
    unit_tokens: Sequence[int],
    target: int,
    counter: TokenCounter,
) -> Fitted:
    """The largest prompt ``compose(n)`` of at most ``target`` tokens, within one unit of it.

    Args:
        compose: the user message with the first ``n`` filler units (needles and question fixed).
        unit_tokens: each filler unit's tokens on its own, with its separator.
        target: the length in the counter's tokens.
        counter: the served model's counter.

    Raises:
        ValueError: the prompt without filler is already longer than ``target``, or the units
            cannot reach it.
    """
    bare = counter.chat(compose(0))
    if bare > target:
        raise ValueError(f"a prompt without haystack is {bare} tokens, above the length {target}")
    sums = list(itertools.accumulate(unit_tokens, initial=0))
    n = bisect.bisect_right(sums, target - bare) - 1
    slack = max(unit_tokens, default=1)
    got = counter.chat(compose(n))
    for _ in range(MAX_ROUNDS):
        if got > target:
            n = max(0, bisect.bisect_left(sums, sums[n] - (got - target)))
        elif target - got > slack and n < len(unit_tokens):
            n = min(len(unit_tokens), bisect.bisect_right(sums, sums[n] + target - got) - 1)
        else:
            break
        got = counter.chat(compose(n))
    while got > target and n > 0:  # a tokenizer that merges across units: step back one by one
        n -= 1
        got = counter.chat(compose(n))
    if target - got > slack and n == len(unit_tokens):
        raise ValueError(f"the haystack's {n} units reach {got} tokens, short of {target}")
    return Fitted(compose(n), got, n)


def units_for(
    draw: Callable[[], str], target: int, counter: TokenCounter, batch: int = 256
) -> tuple[list[str], list[int]]:
    """Filler units drawn until their tokens pass ``target`` by a tenth (fit then cuts them)."""
    units: list[str] = []
    tokens: list[int] = []
    total = 0
    while total < target * 1.1 + 64:
        more = [draw() for _ in range(batch)]
        counts = counter.pieces([unit + "\n" for unit in more])  # joined by newlines
        units += more
        tokens += counts
        total += sum(counts)
    return units, tokens
