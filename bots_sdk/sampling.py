"""Simulating from a bot's own view: sample the cards it cannot see, consistently with what it
knows, and rebuild a full engine state to play on from (a "determinization").

What a view tells about the hidden cards, and what the sampler respects:

- its own hand, every card played this hand, and the cards it passed (they are in the
  receiver's hand until he plays them);
- voids: a seat that did not follow the led suit holds none of it;
- a seat that led a heart before hearts were broken held nothing but hearts; a seat that
  played a point card to the first trick held nothing but point cards;
- how many cards each seat still holds, and the kitty's size (its cards are unseen too).

>>> import random
>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=4)
>>> for card in ["2C"]:
...     state.apply(card)
>>> view = View.from_observation(state.observation(state.current_seat))
>>> guess = Simulation(view, random.Random(1)).sample()
>>> guess.current_seat == view.seat, guess.hand_of(view.seat) == view.hand, guess.plays()
(True, True, ['2C'])
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING

from bots_sdk.errors import SamplingError as SamplingError  # (its home before; still here)
from engine.cards import CARD_TEXTS, DECK_SIZE
from engine.state import GameState, IllegalMoveError, Phase

if TYPE_CHECKING:
    from bots_sdk.view import View

_ALL_SUITS = "CDHS"


class Simulation:
    """Samples full game states consistent with ``view`` (a ``play`` decision)."""

    def __init__(self, view: View, rng: random.Random, *, attempts: int = 200) -> None:
        if view.decision != "play":
            raise ValueError(f"simulation samples play decisions, not {view.decision!r}")
        self.view = view
        self.rng = rng
        self.attempts = attempts
        self._prepare()

    def _prepare(self) -> None:
        view = self.view
        rules = view.rules
        n = rules.players
        me = view.seat
        plays = [(s, c) for trick in view.tricks for s, c in trick.plays] + list(view.trick)
        self.plays = [card for _, card in plays]
        played_by: list[list[str]] = [[] for _ in range(n)]
        for seat, card in plays:
            played_by[seat].append(card)
        self.played_by = played_by

        # Which suits (and point-only hands) each seat may still hold.
        allowed = [set(_ALL_SUITS) for _ in range(n)]
        only_points = [False] * n
        broken = rules.hearts_break == "no_broken"
        breakers = {"H"} if rules.hearts_break == "heart" else {"H", "QS"}
        tricks = [list(t.plays) for t in view.tricks] + ([list(view.trick)] if view.trick else [])
        for number, trick in enumerate(tricks):
            led = trick[0][1][1]
            leader = trick[0][0]
            if led == "H" and not broken and number > 0:
                allowed[leader] &= {"H"}  # led a heart unbroken: held nothing else
            for seat, card in trick[1:]:
                if card[1] != led:
                    allowed[seat].discard(led)
                    if (
                        number == 0
                        and rules.no_points_first_trick
                        and (card[1] == "H" or card == "QS")
                    ):
                        only_points[seat] = True
            for _, card in trick:
                if card[1] in breakers or card in breakers:
                    broken = True
        self.allowed = allowed
        self.only_points = only_points

        # Cards whose holder is known: mine, and what I passed (until played).
        known: list[Counter[str]] = [Counter() for _ in range(n)]
        known[me].update(view.hand)
        if view.passed and view.pass_offset:
            receiver = (me + view.pass_offset) % n
            still = Counter(view.passed) - Counter(played_by[receiver])
            known[receiver].update(still)
        self.known = known

        in_play = Counter(CARD_TEXTS[i] for i in range(2 * DECK_SIZE) if rules.deck_mask >> i & 1)
        unseen = in_play - Counter(self.plays)
        for counter in known:
            unseen -= counter
        self.unseen = sorted(unseen.elements())
        self.capacity = [view.cards_left[s] - sum(known[s].values()) for s in range(n)]
        self.kitty_size = rules.kitty if not view.kitty else 0
        if sum(self.capacity) + self.kitty_size != len(self.unseen):
            raise SamplingError("the view's card counts do not add up")

    def _fits(self, seat: int, card: str) -> bool:
        if card[1] not in self.allowed[seat]:
            return False
        return not self.only_points[seat] or card[1] == "H" or card == "QS"

    def _assign(self) -> tuple[list[list[str]], list[str]] | None:
        n = self.view.rules.players
        cards = self.unseen[:]
        self.rng.shuffle(cards)
        room = self.capacity[:]
        hands: list[list[str]] = [[] for _ in range(n)]
        kitty: list[str] = []
        kitty_room = self.kitty_size
        # Most constrained cards first; each goes to a random seat that fits and has room.
        options = {card: [s for s in range(n) if self._fits(s, card)] for card in set(cards)}
        cards.sort(key=lambda card: len(options[card]))
        for card in cards:
            seats = [s for s in options[card] if room[s] > 0]
            slots = sum(room[s] for s in seats) + kitty_room
            if slots == 0:
                return None
            pick = self.rng.randrange(slots)
            for seat in seats:
                if pick < room[seat]:
                    hands[seat].append(card)
                    room[seat] -= 1
                    break
                pick -= room[seat]
            else:
                kitty.append(card)
                kitty_room -= 1
        return hands, kitty

    def sample(self) -> GameState:
        """A full state at this decision: the seen cards as they are, the unseen ones
        dealt at random within what the view rules out. Raises :class:`SamplingError`."""
        view = self.view
        for _ in range(self.attempts):
            assigned = self._assign()
            if assigned is None:
                continue
            hands, kitty = assigned
            start = [
                hands[s] + list(self.known[s].elements()) + self.played_by[s]
                for s in range(view.rules.players)
            ]
            try:
                state = GameState.at_play(
                    view.rules,
                    start,
                    kitty=kitty,
                    hand_number=view.hand_number,
                    totals=view.totals,
                    trump=view.trump,
                    hakem=view.hakem,
                    plays=self.plays,
                )
            except (IllegalMoveError, ValueError):
                continue  # a play the sample makes impossible: deal again
            if state.phase is Phase.PLAY and state.current_seat == view.seat:
                return state
        raise SamplingError(f"no consistent deal found in {self.attempts} attempts")

    def rollout(self, action: str) -> list[int]:
        """Sample, play ``action``, finish the hand at random; what the hand adds to each
        total (after the moon)."""
        state = self.sample()
        state.apply(action)
        state.play_random(self.rng)
        return list(state.history[-1].scores) if state.history else state.points_taken()
