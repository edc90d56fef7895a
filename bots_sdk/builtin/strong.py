"""``strong``: determinized Monte-Carlo search on cheap reshuffled deals, with cards that no
unseen card separates merged into one choice and a sharper rollout policy.

For each play with a choice it builds one state consistent with its view
(:class:`bots_sdk.sampling.Simulation`), then deals the unseen cards again for every sample
straight into copies of that state, within what the view rules out: voids, a heart led before
hearts were broken, points discarded to the first trick, the cards it passed (the receiver
holds them until he plays them), the clubs below the first lead (they are in the kitty); and,
as a strong lean rather than a rule, that a seat which discarded something else while the
queen of spades was out does not hold her. Cards with no unseen card between them (``7C`` and
``9C`` once ``8C`` is gone) are one choice. Every choice is played out on every sample (common
random numbers) by a rollout policy on the engine's masks: lead the card least likely to win,
duck as high as possible, take a trick lost anyway with the highest card, shed the queen and
then high spades and hearts when void, and deny a lone shooter the moon. When the moon is in
reach (no other seat has a point), each choice is also played out with this seat shooting
for it, and the better of the two plans counts. The choices are halved as the budget goes
(successive halving: the better half gets the rest), and the one with the best mean of (its
score minus the others' mean score) is played, so moon shots count.

``budget`` rollouts a play (4,000 unless told: the platform's top reference; ``strong-1`` to
``strong-3`` are the same search at 50, 200 and 700, the strength levels below it), fewer when
the clock runs low, or, given ``think``, as many as fit in that many seconds. A pass is
searched too: the heuristic's most passable cards, a few more
than it passes, make the candidates, each played out to the end of the hand on shared deals of
the unseen cards, the other seats passing as the heuristic would (``pass_budget`` rollouts, four
plays' worth by default; where a kitty or a second deck would need constraints these deals do
not keep, the heuristic passes). Declaring trumps and the moon choice are the heuristic's.
The search itself is :mod:`bots_sdk.search`, compiled with the engine's hot modules.

>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=2)
>>> state.apply("2C")
>>> view = View.from_observation(state.observation(state.current_seat))
>>> bot = StrongBot(seed=1, budget=60)
>>> bot.play(view) in view.legal, bot.last_rollouts  # 60 rollouts among three clubs
(True, 60)
"""

from __future__ import annotations

import itertools
import math
import time

from bots_sdk.builtin.heuristic import HeuristicBot
from bots_sdk.sampling import SamplingError, Simulation
from bots_sdk.search import (
    Deals,
    Rollout,
    choices,
    moon_in_reach,
    pass_template,
    search,
    search_passes,
)
from bots_sdk.view import View
from engine.rules import RuleSet

__all__ = ["Deals", "StrongBot", "choices", "pass_candidates"]

#: Rollouts a second the clock is assumed to allow (a slow machine's rate, halved): how a
#: short clock trims the budget without looking at the wall clock.
_ROLLOUTS_PER_SECOND = 1500


def clocked(limit: int, time_left: float | None) -> int:
    """The rollouts a pass or a play may take with ``time_left`` seconds on its clock:
    ``limit``, unless the clock is too short for it at a slow machine's rate. A ladder's clock
    (a second a move and a bank of ten) leaves strong its whole budget, pass and play, so it
    plays there as it plays off the clock.

    >>> clocked(16_000, 11.0), clocked(4_000, 11.0), clocked(10_000, 1.0), clocked(5, None)
    (16000, 4000, 1500, 5)
    """
    return limit if time_left is None else min(limit, int(time_left * _ROLLOUTS_PER_SECOND))


def pass_candidates(order: list[str], count: int, most: int) -> list[list[str]]:
    """The passes worth searching: every choice of ``count`` among the first cards of
    ``order`` (the most passable first), as many first cards as keep the choices at ``most``.

    >>> pass_candidates(["QS", "AH", "KH", "2C", "3C", "4C", "5C"], 3, 20)[:2]
    [['QS', 'AH', 'KH'], ['QS', 'AH', '2C']]
    >>> len(pass_candidates(["QS", "AH", "KH", "2C", "3C", "4C", "5C"], 3, 20))
    20
    """
    pool = count
    while pool < len(order) and math.comb(pool + 1, count) <= most:
        pool += 1
    return [list(c) for c in itertools.combinations(order[:pool], count)]


class StrongBot(HeuristicBot):
    """Passes and plays chosen by determinized search: ``budget`` rollouts a play
    (fewer when its clock runs low), or, given ``think``, as many as fit in that many seconds.
    With no ``think`` the play depends only on the seed and the views, never on the clock
    (unless the clock is about to run out).

    >>> from engine.rules import RuleSet
    >>> from engine.state import GameState
    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=2)
    >>> state.apply("2C")
    >>> view = View.from_observation(state.observation(state.current_seat))
    >>> StrongBot(seed=1, think=0.01).play(view) in view.legal
    True
    """

    #: Whether to play each choice out a second time with this seat shooting the moon, when
    #: the moon is in reach (:func:`bots_sdk.search.moon_in_reach`), and keep the better of the two.
    weigh_moon = True
    #: The share of high cards (aces, kings, queens) that puts the moon in reach before this
    #: seat has a point.
    moon_hand = 0.5

    #: The most candidate passes searched (20: three of the heuristic's six first cards).
    pass_candidates = 20

    #: Rollouts a play when none is given: the platform's top reference.
    default_budget = 4000
    #: Rollouts a pass, in plays' worth, when none is given.
    pass_plays = 4

    def __init__(
        self,
        seed: int = 0,
        budget: int | None = None,
        think: float | None = None,
        pass_budget: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.budget = self.default_budget if budget is None else budget
        #: Rollouts for a pass (0: pass as the heuristic does).
        self.pass_budget = self.pass_plays * self.budget if pass_budget is None else pass_budget
        self.think = think
        #: How many rollouts the last play searched (0 when it had no choice or no search).
        self.last_rollouts = 0
        #: Plays left to the heuristic because the view could not be sampled.
        self.fallbacks = 0
        self._rollouts: dict[RuleSet, Rollout] = {}

    def pass_cards(self, view: View) -> list[str]:
        """The heuristic's most passable cards, a few more than it passes, make candidate
        passes (every choice of ``pass_count`` of them: at most :attr:`pass_candidates`),
        each played out to the end of the hand on shared samples: ``pass_budget`` rollouts."""
        self.last_rollouts = 0
        order = self.pass_order(view)
        count = view.rules.pass_count
        heuristic = order[:count]
        if not self.pass_budget or count == 0 or len(order) <= count:
            return heuristic
        candidates = pass_candidates(order, count, self.pass_candidates)
        limit = self.pass_budget
        deadline = None
        started = time.perf_counter()
        if view.time_left is not None:
            if view.time_left < 0.05:
                return heuristic
            limit = clocked(limit, view.time_left)
            deadline = started + view.time_left / 4
        try:
            template = pass_template(view, self.rng)
            if template is None:
                return heuristic
            rollout = self._rollout(view.rules)
            best, self.last_rollouts, _ = search_passes(
                view, candidates, template, rollout, self.rng, limit, deadline
            )
        except (SamplingError, ValueError):
            self.fallbacks += 1
            return heuristic
        return candidates[best]

    def _rollout(self, rules: RuleSet) -> Rollout:
        rollout = self._rollouts.get(rules)
        if rollout is None:
            rollout = self._rollouts[rules] = Rollout(rules)
        return rollout

    def play(self, view: View) -> str:
        self.last_rollouts = 0
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        started = time.perf_counter()
        if view.time_left is not None and view.time_left < 0.02:
            return super().play(view)  # no time to think
        options = choices(view)
        if len(options) == 1:
            return options[0]
        try:
            return self._search(view, options, started)
        except (SamplingError, ValueError):
            self.fallbacks += 1
            return super().play(view)

    def _search(self, view: View, options: list[str], started: float) -> str:
        rollout = self._rollout(view.rules)
        # (Cancellation's double deck can take many tries; a short clock cannot wait for them.)
        attempts = 200 if view.time_left is None or view.time_left > 1 else 30
        deals = Deals(view, Simulation(view, self.rng, attempts=attempts).sample())
        limit = self.budget
        deadline = None
        if self.think is not None:
            deadline, limit = started + self.think, 1 << 30
        if view.time_left is not None:
            limit = clocked(limit, view.time_left)
            guard = started + view.time_left / 4  # (only a stalled machine gets here)
            deadline = guard if deadline is None else min(deadline, guard)
        moon = self.weigh_moon and moon_in_reach(view, self.moon_hand)
        best, self.last_rollouts, _ = search(
            view, options, deals, rollout, self.rng, limit, deadline, moon
        )
        return options[best]


# --- the strength levels --------------------------------------------------------------------
# The same search at smaller budgets: opponents between the heuristic and the top reference,
# each rated on the ladders, so an author or a person picks one by its rating.


class StrongLevel1(StrongBot):
    """``strong-1``, the first strength level: strong's search at 50 rollouts a play (250 a
    pass), about montecarlo's strength in a fraction of a millisecond a play."""

    default_budget = 50


class StrongLevel2(StrongBot):
    """``strong-2``, the second strength level: strong's search at 200 rollouts a play (1,000
    a pass)."""

    default_budget = 200


class StrongLevel3(StrongBot):
    """``strong-3``, the third strength level: strong's search at 700 rollouts a play (3,500
    a pass). The fourth and top level is ``strong`` itself."""

    default_budget = 700
