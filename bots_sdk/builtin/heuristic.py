"""``heuristic``: a sensible rule-based player.

Passing: the queen of spades unless well guarded, the ace and king of spades when they would
catch her, high hearts, and high cards of short suits (to make voids). Play: duck under the
winning card when possible (as high as possible), take point-free tricks cheaply when last,
dump the queen (then high spades, then high hearts) when void, flush the queen with low spades,
never lead her; and defend against a moon shot by taking a heart when one player has every
point so far.

>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> state = GameState(RuleSet.from_preset("standard"), seed=1)
>>> HeuristicBot().pass_cards(View.from_observation(state.observation(0)))
['AS', '7H', 'AD']
"""

from __future__ import annotations

from collections import Counter

from bots_sdk.bot import Bot, highest, lowest, strength
from bots_sdk.view import View

QUEEN = 10  # strength of a queen


class HeuristicBot(Bot):
    """Rule-based play: duck, shed danger, manage the queen of spades, defend the moon."""

    def pass_cards(self, view: View) -> list[str]:
        return self.pass_order(view)[: view.rules.pass_count]

    def pass_order(self, view: View) -> list[str]:
        """The hand, the card most worth passing first."""
        hand = view.hand
        guards = sum(1 for c in hand if c[1] == "S" and strength(c) < QUEEN)
        lengths = Counter(c[1] for c in hand)
        bonus = view.rules.jd_bonus

        def danger(card: str) -> float:
            rank, suit = strength(card), card[1]
            if card == "QS":
                return 100 if guards < 4 else 5
            if suit == "S" and rank > QUEEN:
                return 80 if "QS" not in hand or guards < 4 else 4
            score: float = rank
            if suit == "H":
                score += 8 + (10 if rank >= 9 else 0)
            elif suit != "S" and lengths[suit] <= 3:
                score += 12 - 2 * lengths[suit]  # emptying a short suit makes a void
            if card == "JD" and bonus < 0:
                score -= 40  # the Omnibus jack is worth keeping
            return score

        return sorted(hand, key=lambda c: (danger(c), c), reverse=True)

    def play(self, view: View) -> str:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        played = {card for trick in view.tricks for _, card in trick.plays}
        played.update(card for _, card in view.trick)
        queen_out = "QS" not in played and "QS" not in view.hand
        if not view.trick:
            return self._lead(view, legal, queen_out)
        led = view.led_suit
        if legal[0][1] == led and all(c[1] == led for c in legal):
            return self._follow(view, legal, queen_out)
        return self._discard(view, legal, queen_out)

    def _lead(self, view: View, legal: list[str], queen_out: bool) -> str:
        non_hearts = [c for c in legal if c[1] != "H"] or legal
        if queen_out:
            low_spades = [c for c in non_hearts if c[1] == "S" and strength(c) < QUEEN]
            if low_spades and not any(c[1] == "S" and strength(c) > QUEEN for c in view.hand):
                return lowest(low_spades)  # flush the queen out
        safe = [
            c
            for c in non_hearts
            if c != "QS" and not (c[1] == "S" and strength(c) > QUEEN and queen_out)
        ]
        return lowest(safe or non_hearts)

    def _winning(self, view: View) -> tuple[str, bool]:
        """The card winning the trick so far, and whether it is a trump on another suit."""
        led = view.led_suit
        trumps = [c for _, c in view.trick if view.trump and c[1] == view.trump]
        if trumps and led != view.trump:
            return highest(trumps), True
        return highest([c for _, c in view.trick if c[1] == led]), False

    def _moon_threat(self, view: View) -> bool:
        taken = view.points_taken
        total = sum(taken)
        return total >= 8 and any(t == total for s, t in enumerate(taken) if s != view.seat)

    def _follow(self, view: View, legal: list[str], queen_out: bool) -> str:
        winning, trumped = self._winning(view)
        points = sum(1 for _, c in view.trick if c[1] == "H" or c == "QS")
        last = len(view.trick) == view.players - 1
        below = legal if trumped else [c for c in legal if strength(c) < strength(winning)]
        above = [c for c in legal if c not in below]
        if self._moon_threat(view) and points and above:
            return lowest(above)  # take a point to stop the shooter
        if "QS" in below:
            return "QS"  # someone else takes the queen
        if below:
            return highest(below)
        # Every card wins for now.
        keep_queen = [c for c in legal if c != "QS"] or legal
        if last and points == 0:
            return highest(keep_queen)
        return lowest(keep_queen)

    def _discard(self, view: View, legal: list[str], queen_out: bool) -> str:
        if "QS" in legal:
            return "QS"
        if queen_out:
            high_spades = [c for c in legal if c[1] == "S" and strength(c) > QUEEN]
            if high_spades:
                return highest(high_spades)
        hearts = [c for c in legal if c[1] == "H"]
        if hearts and not self._moon_threat(view):
            return highest(hearts)
        lengths = Counter(c[1] for c in view.hand)
        shortest = min(legal, key=lambda c: (lengths[c[1]], -strength(c)))
        return shortest
