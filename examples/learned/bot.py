"""learned: a Hearts bot whose pass and play are a linear softmax policy learned by
``train.py`` (REINFORCE against the built-ins), stored in ``weights.npz`` beside this file.

Each legal card gets a short feature vector from the bot's view (its rank, its points, how
many unseen cards of its suit are above and below it, whether it would win the trick, what
the trick holds...); the bot plays the card whose features score highest under the learned
weights, and passes the highest-scoring cards. Trump and moon choices are the SDK's
defaults. Only the standard library, the SDK and NumPy: it runs wherever bots run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bots_sdk import Bot, View

RANKS = "23456789TJQKA"
SUITS = "CDHS"
QUEEN = RANKS.index("Q")

#: Features per card, by kind of decision (the weight vectors' lengths).
PLAY_FEATURES = 32
PASS_FEATURES = 11


def _rank(card: str) -> float:
    return RANKS.index(card[0]) / 12.0


def card_points(view: View, card: str) -> float:
    """What taking ``card`` costs under these rules, in queens of spades of the standard
    deck (13 points = 1.0); the Omnibus jack is negative."""
    rules = view.rules
    if card[1] == "H":
        return rules.heart_points[RANKS.index(card[0])] / 13.0
    if card == "QS":
        return rules.queen_points / 13.0
    if card == "JD":
        return rules.jd_bonus / 13.0
    return 0.0


def _beats(card: str, best: str, led: str, trump: str | None) -> bool:
    """Whether ``card`` beats ``best``, the card winning a trick led in ``led``."""
    if card[1] == best[1]:
        return RANKS.index(card[0]) > RANKS.index(best[0])
    if trump is not None and card[1] == trump:
        return True
    return False


def _winning(view: View) -> str | None:
    """The card winning the current trick so far."""
    led = view.led_suit
    if led is None:
        return None
    best = view.trick[0][1]
    for _, card in view.trick[1:]:
        if _beats(card, best, led, view.trump):
            best = card
    return best


def play_features(view: View) -> np.ndarray:
    """One row of :data:`PLAY_FEATURES` features per card of ``view.legal``."""
    hand = view.hand
    played = {card for trick in view.tricks for _, card in trick.plays}
    played.update(card for _, card in view.trick)
    seen = played | set(hand)
    unseen = [
        rank + suit
        for suit in SUITS
        for rank in RANKS
        if rank + suit not in seen and rank + suit not in view.rules.removed
    ]
    lengths = {suit: sum(c[1] == suit for c in hand) for suit in SUITS}
    queen_out = "QS" not in played and "QS" not in hand
    led = view.led_suit
    best = _winning(view)
    trick_points = sum(card_points(view, c) for _, c in view.trick)
    last = len(view.trick) == view.players - 1
    rows = np.zeros((len(view.legal), PLAY_FEATURES))
    for i, card in enumerate(view.legal):
        rank, suit = _rank(card), card[1]
        lower = sum(c[1] == suit and _rank(c) < rank for c in unseen) / 13.0
        higher = sum(c[1] == suit and _rank(c) > rank for c in unseen) / 13.0
        points = card_points(view, card)
        queen = float(card == "QS")
        high_spade = float(suit == "S" and RANKS.index(card[0]) > QUEEN and queen_out)
        length = lengths[suit] / 13.0
        trump = float(view.trump is not None and suit == view.trump)
        heart = float(suit == "H")
        if best is None:  # leading
            rows[i, 0:10] = (
                rank,
                rank * rank,
                points,
                queen,
                high_spade,
                length,
                lower,
                higher,
                heart,
                trump,
            )
            continue
        wins = float(_beats(card, best, led or suit, view.trump))
        if suit == led:  # following suit
            margin = 0.0 if wins else (RANKS.index(best[0]) - RANKS.index(card[0])) / 12.0
            rows[i, 10:23] = (
                rank,
                rank * rank,
                points,
                queen,
                high_spade,
                length,
                lower,
                higher,
                wins,
                wins * trick_points,
                wins * last,
                margin,
                wins * higher,
            )
        else:  # discarding (or trumping)
            rows[i, 23:32] = (
                rank,
                rank * rank,
                points,
                queen,
                high_spade,
                length,
                heart,
                wins,
                wins * trick_points,
            )
    return rows


def pass_features(view: View, cards: list[str]) -> np.ndarray:
    """One row of :data:`PASS_FEATURES` features per card of ``cards`` (to pass from)."""
    hand = view.hand
    lengths = {suit: sum(c[1] == suit for c in hand) for suit in SUITS}
    guards = sum(c[1] == "S" and RANKS.index(c[0]) < QUEEN for c in hand) / 13.0
    has_queen = float("QS" in hand)
    rows = np.zeros((len(cards), PASS_FEATURES))
    for i, card in enumerate(cards):
        rank, suit = _rank(card), card[1]
        high_spade = float(suit == "S" and RANKS.index(card[0]) > QUEEN)
        heart = float(suit == "H")
        rows[i] = (
            rank,
            rank * rank,
            card_points(view, card),
            float(card == "QS"),
            float(card == "QS") * guards,
            high_spade,
            high_spade * (1 - has_queen),
            heart * rank,
            lengths[suit] / 13.0,
            float(suit == "C"),
            rank * lengths[suit] / 13.0,
        )
    return rows


def load_weights(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The play and pass weight vectors saved by ``train.py``."""
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: run train.py, and play or upload the zip of bot.py and "
            "weights.npz (the sandbox mounts a lone bot.py without its folder)"
        )
    with np.load(path) as data:
        play, passing = np.asarray(data["play"], float), np.asarray(data["pass"], float)
    if play.shape != (PLAY_FEATURES,) or passing.shape != (PASS_FEATURES,):
        raise ValueError(f"{path}: weights of the wrong shape (retrain with train.py)")
    return play, passing


class LearnedBot(Bot):
    """Plays and passes by the learned linear scores; everything else is the SDK default."""

    name = "learned"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.play_weights, self.pass_weights = load_weights(Path(__file__).parent / "weights.npz")

    def pass_cards(self, view: View) -> list[str]:
        scores = pass_features(view, view.hand) @ self.pass_weights
        order = sorted(range(len(view.hand)), key=lambda i: (-scores[i], view.hand[i]))
        return [view.hand[i] for i in order[: view.rules.pass_count]]

    def play(self, view: View) -> str:
        if len(view.legal) == 1:
            return view.legal[0]
        scores = play_features(view) @ self.play_weights
        return view.legal[int(np.argmax(scores))]
