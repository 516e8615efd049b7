"""Where the anytime design spends its alpha: which looks, and how much each check gets at each.

Every look's weights, summed over all looks planned or not, stay at most 1 for each check, so
``pipeline.stats.anytime``'s union bound holds whatever the looks' correlation. Two schedules:

``every`` (cells written before the doubling schedule; ``alpha_looks`` absent): every look
spends; the mean checks in proportion to the look's number over the planned looks
(``look_weight``), the broken-prompt check ``1 / (j (j + 1))`` at look ``j``.

``doubling`` (what cells write since): the question is the unit of evidence, so a look's evidence
saturates as repeats grow (its SE tends to the spread of the questions' true differences, not to
0), and spreading alpha over every round of 2 pays a look-count price for little new evidence:
with 8 candidates a 5-point drop concentrated on the uncertain questions was NO-GO 18.5% of the
time against 94.6% for the fixed design at the plan's end, and a prompt broken on ~10 questions
19% (the sign test's floor 2^-10 under a 1/272 share). So alpha is spent only at looks whose
repeats double (rounds 1, 2, 4, 8, ... and the plan's last), the runner still looking at every
round (the copies stop, the data it writes):

- GO: over those planned looks in proportion to their index (earlier stops on clean candidates);
- NO-GO's mean check: ``NOGO_LAST_SHARE`` at the plan's last look, where a concentrated drop shows,
  the rest of the planned share over the earlier ones in proportion to their index;
- the broken-prompt check: its whole planned share at the first spending look with at least
  ``SATURATED_REPEATS`` repeats (its pattern, right in most of the baseline's repeats and none of
  the candidate's, is settled there, and its exact sign test cannot go below ``2^-broken``);
- past the plan (a run extended beyond ``max_repeats``): ``1 - PLANNED_SHARE`` over the looks that
  double the plan's last, ``1 / (e (e + 1))`` of it at the ``e``-th.
"""

from __future__ import annotations

from dataclasses import dataclass

PLANNED_SHARE = 0.9  # alpha's share spent over the planned looks; the rest past the plan
NOGO_LAST_SHARE = 0.8  # of alpha, NO-GO's mean check at the plan's last look (doubling)
SATURATED_REPEATS = 8  # repeats from which the broken-prompt pattern is settled (doubling)
ALPHA_LOOKS = ("every", "doubling")


def look_weight(look: int, planned: int) -> float:
    """``s_j``: the share of alpha look ``look`` (1-based) is read at; sums to 1 over all looks.

    ``PLANNED_SHARE`` over the ``planned`` looks in proportion to the look's number (a later
    look has more repeats), the rest over looks past the plan (``1 / (e (e + 1))`` of it at the
    ``e``-th extra look), so a run extended past ``max_repeats`` stays valid.
    """
    planned = max(planned, 1)
    if look <= planned:
        return PLANNED_SHARE * look / (planned * (planned + 1) / 2)
    extra = look - planned
    return (1.0 - PLANNED_SHARE) / (extra * (extra + 1))


def look_share(look: int) -> float:
    """The share of the broken-prompt check's alpha spent at look ``look`` (1-based), ``every``."""
    return 1.0 / (look * (look + 1))


@dataclass(frozen=True)
class LookSchedule:
    """The alpha each check is read at per look, as shares of its level (sum <= 1 over looks).

    Attributes:
        per_round: repeats per round (look ``j`` has ``j * per_round`` repeats).
        planned: the looks the design plans (``SequentialDesign.planned``).
        alpha_looks: "every" or "doubling" (see the module docstring).
    """

    per_round: int
    planned: int
    alpha_looks: str = "every"

    def __post_init__(self) -> None:
        if self.alpha_looks not in ALPHA_LOOKS:
            raise ValueError(f"alpha_looks={self.alpha_looks!r}: use one of {ALPHA_LOOKS}")
        if self.per_round < 1 or self.planned < 1:
            raise ValueError(f"per_round={self.per_round}, planned={self.planned}: both >= 1")

    def go(self, look: int) -> float:
        """GO's share at ``look``."""
        if self.alpha_looks == "every":
            return look_weight(look, self.planned)
        spends = self.spending_looks()
        if look in spends:
            index = spends.index(look) + 1
            return PLANNED_SHARE * index / (len(spends) * (len(spends) + 1) / 2)
        return self._past_plan(look, self.planned)

    def nogo(self, look: int) -> float:
        """NO-GO mean check's share at ``look``."""
        if self.alpha_looks == "every":
            return look_weight(look, self.planned)
        spends = self.spending_looks()
        if look not in spends:
            return self._past_plan(look, self.planned)
        if len(spends) == 1:
            return PLANNED_SHARE
        if look == spends[-1]:
            return NOGO_LAST_SHARE
        index, earlier = spends.index(look) + 1, len(spends) - 1
        return (PLANNED_SHARE - NOGO_LAST_SHARE) * index / (earlier * (earlier + 1) / 2)

    def broken(self, look: int) -> float:
        """The broken-prompt check's share at ``look``."""
        if self.alpha_looks == "every":
            return look_share(look)
        settled = self.settled_look()
        if look == settled:
            return PLANNED_SHARE
        return self._past_plan(look, settled) if look > settled else 0.0

    def spending_looks(self) -> list[int]:
        """The planned looks that spend alpha: rounds 1, 2, 4, ... and the plan's last."""
        looks, j = [], 1
        while j < self.planned:
            looks.append(j)
            j *= 2
        return [*looks, self.planned]

    def settled_look(self) -> int:
        """The broken check's look: the first spending look with ``SATURATED_REPEATS`` repeats."""
        spends = self.spending_looks()
        return next((j for j in spends if j * self.per_round >= SATURATED_REPEATS), spends[-1])

    @staticmethod
    def _past_plan(look: int, last: int) -> float:
        # Looks doubling ``last``: its e-th double gets 1 / (e (e + 1)) of the reserve.
        ratio, extra = look // last, 0
        if look <= last or look % last or ratio & (ratio - 1):
            return 0.0
        extra = ratio.bit_length() - 1
        return (1.0 - PLANNED_SHARE) / (extra * (extra + 1))
