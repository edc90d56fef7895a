"""What a seat sees, as numbers: the observation vector and action mask of the learning
environments (:mod:`bots_sdk.learning`), built from the SDK's :class:`~bots_sdk.view.View`.

Needs only numpy, so a bot may import it on the platform (numpy is in the bot runtime,
:mod:`bots_sdk.runtime`): a policy trained on :mod:`bots_sdk.learning`'s observations plays
with the very same encoding. ``docs/learning.md`` describes the layout.

>>> action_of("QS"), text_of(49)
(49, 'QS')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import numpy as np
    import numpy.typing as npt
except ImportError as exc:  # the bot runtime's numpy is not installed here
    raise ImportError("bots_sdk.observation needs numpy: pip install 'bidel-sdk[numpy]'") from exc

from bots_sdk.view import View
from engine.cards import RANKS, SUITS
from engine.rules import RuleSet
from engine.state import GameState  # noqa: F401  (the doctests build views from states)

Observation = dict[str, npt.NDArray[Any]]

#: Size of the action space: 52 cards, 4 trump suits, 2 moon choices.
ACTIONS = 58
#: First action of the trump suits (``C D H S``) and of the moon choices (``add subtract``).
TRUMP_ACTIONS = 52
MOON_ACTIONS = 56
_MOON = ("add", "subtract")
_CARD_TEXTS = tuple(rank + suit for suit in SUITS for rank in RANKS)
_ACTION_OF: dict[str, int] = {
    **{text: index for index, text in enumerate(_CARD_TEXTS)},
    **{suit: TRUMP_ACTIONS + index for index, suit in enumerate(SUITS)},
    **{choice: MOON_ACTIONS + index for index, choice in enumerate(_MOON)},
}
_TEXT_OF: tuple[str, ...] = (*_CARD_TEXTS, *SUITS, *_MOON)
_DECISIONS = ("pass", "play", "trump", "moon")
#: Observation values are clipped to [-BOUND, BOUND] (totals far past the target, say).
BOUND = 2.0
#: Points are scaled by this: the standard deck's 26 points make 1.0.
POINT_SCALE = 26.0


def action_of(text: str) -> int:
    """The action of a card, trump suit or moon choice, given as the engine's text.

    >>> action_of("2C"), action_of("AS"), action_of("H"), action_of("subtract")
    (0, 51, 54, 57)
    """
    try:
        return _ACTION_OF[text]
    except KeyError:
        raise ValueError(f"{text!r} is not a card, a suit or a moon choice") from None


def text_of(action: int) -> str:
    """The engine's text of an action (the inverse of :func:`action_of`).

    >>> text_of(10), text_of(50), text_of(52), text_of(56)
    ('QC', 'KS', 'C', 'add')
    """
    if not 0 <= action < ACTIONS:
        raise ValueError(f"actions are 0..{ACTIONS - 1}, not {action}")
    return _TEXT_OF[action]


def observation_layout(rules: RuleSet) -> list[tuple[str, int]]:
    """The blocks of the observation vector, in order, with their sizes. ``n`` is the number
    of seats; per-seat blocks are indexed from the observer (0 is itself). Card blocks are 52
    long in action order (``13 * suit + rank``) and count copies (two under Cancellation).

    >>> [name for name, _ in observation_layout(RuleSet.from_preset("standard"))][:4]
    ['hand', 'trick', 'played', 'passed']
    >>> sum(size for _, size in observation_layout(RuleSet.from_preset("standard")))
    713
    """
    n = rules.players
    return [
        ("hand", 52),  # cards held
        ("trick", 52 * n),  # the card each seat has put on the current trick
        ("played", 52 * n),  # the cards each seat played to the completed tricks of the hand
        ("passed", 52),  # the cards this seat gave away this hand
        ("received", 52),  # and those it got (after the exchange)
        ("kitty", 52),  # the kitty's cards, once the hand is over
        ("card_points", 52),  # each card's points under these rules (JD bonus included) / 26
        ("points_taken", n),  # card points taken this hand (a hidden kitty not counted) / 26
        ("totals", n),  # game totals before this hand / target
        ("cards_left", n),  # cards each seat holds / hand size
        ("leader", n),  # who led the current trick (one-hot)
        ("hakem", n),  # Hokm's hakem (one-hot)
        ("kitty_taker", n),  # who took the kitty (one-hot)
        ("trump", 4),  # the trump suit (one-hot C D H S)
        ("decision", 4),  # pass, play, trump, moon (one-hot; all zero when the hand is over)
        ("pass_direction", 4),  # to the next seat, the previous, across, or hold (one-hot)
        ("hearts_broken", 1),
    ]


def observation_size(rules: RuleSet) -> int:
    """Length of the observation vector for ``rules``."""
    return sum(size for _, size in observation_layout(rules))


_POINTS_CACHE: dict[RuleSet, npt.NDArray[np.float32]] = {}


def _card_points(rules: RuleSet) -> npt.NDArray[np.float32]:
    points = _POINTS_CACHE.get(rules)
    if points is None:
        values = []
        for text in _CARD_TEXTS:
            value = 0
            if text[1] == "H":
                value = rules.heart_points[RANKS.index(text[0])]
            elif text == "QS":
                value = rules.queen_points
            elif text == "JD":
                value = rules.jd_bonus
            values.append(value / POINT_SCALE)
        points = _POINTS_CACHE[rules] = np.clip(np.array(values, dtype=np.float32), -1, 1)
    return points


def action_mask(view: View) -> npt.NDArray[np.int8]:
    """1 for each action ``view.legal`` allows, else 0."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    for text in view.legal:
        mask[_ACTION_OF[text]] = 1
    return mask


def encode(view: View) -> npt.NDArray[np.float32]:
    """The observation vector of a view (see :func:`observation_layout`).

    >>> view = View.from_observation(GameState(RuleSet.from_preset("standard"), seed=1)
    ...                              .observation(0))
    >>> vector = encode(view)
    >>> int(vector[:52].sum()), vector.dtype.name
    (13, 'float32')
    """
    rules = view.rules
    n = rules.players
    seat = view.seat
    out = np.zeros(observation_size(rules), dtype=np.float32)
    at = 0

    def cards(texts: Sequence[str], offset: int) -> None:
        for text in texts:
            out[offset + _ACTION_OF[text]] += 1.0

    cards(view.hand, at)
    at += 52
    for player, card in view.trick:
        out[at + 52 * ((player - seat) % n) + _ACTION_OF[card]] += 1.0
    at += 52 * n
    for trick in view.tricks:
        for player, card in trick.plays:
            out[at + 52 * ((player - seat) % n) + _ACTION_OF[card]] += 1.0
    at += 52 * n
    cards(view.passed, at)
    at += 52
    cards(view.received, at)
    at += 52
    cards(view.kitty, at)
    at += 52
    out[at : at + 52] = _card_points(rules)
    at += 52
    hand_size = max(1, rules.hand_size)
    for player in range(n):
        k = (player - seat) % n
        out[at + k] = view.points_taken[player] / POINT_SCALE
        out[at + n + k] = view.totals[player] / rules.target
        out[at + 2 * n + k] = view.cards_left[player] / hand_size
    at += 3 * n
    for who in (view.leader, view.hakem, view.kitty_taker):
        if who is not None:
            out[at + (who - seat) % n] = 1.0
        at += n
    if view.trump is not None:
        out[at + SUITS.index(view.trump)] = 1.0
    at += 4
    if view.decision in _DECISIONS:
        out[at + _DECISIONS.index(view.decision)] = 1.0
    at += 4
    # By play order, not by name: counterclockwise rules pass "right" to the next seat.
    offset = view.pass_offset
    out[at + (3 if offset == 0 else 0 if offset == 1 else 1 if offset == n - 1 else 2)] = 1.0
    at += 4
    out[at] = float(view.hearts_broken)
    np.clip(out, -BOUND, BOUND, out=out)
    return out


def observe(view: View) -> Observation:
    """The observation dict of a view: ``{"observation": ..., "action_mask": ...}``."""
    return {"observation": encode(view), "action_mask": action_mask(view)}
