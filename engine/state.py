"""The game state: phases, turns, legal actions, applying them, scoring, observations.

One :class:`GameState` plays a whole game, hand after hand, under any :class:`RuleSet`.
Actions are texts: a card (``"QS"``) to pass or play, a suit letter (``"S"``) for the hakem's
trump, ``"add"``/``"subtract"`` for a moon choice. Between hands the state rests in
``Phase.HAND_OVER`` until :meth:`GameState.next_hand` deals the next one.

>>> from engine.rules import RuleSet
>>> state = GameState(RuleSet.from_preset("standard"), seed=7)
>>> state.phase, state.current_seat, len(state.legal_actions())
(<Phase.PASS: 'pass'>, 0, 13)
>>> for card in state.legal_actions()[:3]:
...     state.apply(card)
>>> state.current_seat
1
>>> state.apply("ZZ")
Traceback (most recent call last):
...
engine.state.IllegalMoveError: 'ZZ' is not a card (use rank 2-9 T J Q K A, suit C D H S)
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Final

from engine.cards import (
    _INDEX,
    _INDEX_OF_BIT,
    CARD_RANK,
    CARD_SUIT,
    CARD_TEXTS,
    CLUBS,
    DECK_SIZE,
    DIAMONDS,
    FULL_DECK,
    HEARTS,
    SUIT_MASKS,
    SUIT_MASKS_ONE_DECK,
    SUIT_NAMES,
    SUITS,
    CardError,
    _bit_count,
    card_index,
    cards_to_texts_multi,
    texts_of,
)
from engine.deal import deal_masks
from engine.rules import RuleSet

# Club indices from the two upward, for "the lowest club in play leads".
_CLUBS_BY_RANK: Final = sorted(
    (i for i in range(DECK_SIZE) if CARD_SUIT[i] == CLUBS), key=CARD_RANK.__getitem__
)
_MOON_ACTIONS: Final = ("add", "subtract")
#: The most hands (void ones too) a game lasts under any rules: random play ends every preset
#: within 75, but rules whose points cannot reach the target (every card worth 0, say) would
#: never end. After this many the game ends, the lowest total winning (ties share the win).
MAX_HANDS: Final = 200


class Phase(enum.Enum):
    """Where a game stands; each phase says who acts and with what kind of action.

    >>> GameState(RuleSet.from_preset("hokm_40"), seed=1).phase
    <Phase.DECLARE_TRUMP: 'declare_trump'>
    """

    #: Hokm: the hakem names the trump suit (actions ``C D H S``).
    DECLARE_TRUMP = "declare_trump"
    #: Each seat in turn gives away ``pass_count`` cards, one action per card.
    PASS = "pass"
    #: Tricks: the current seat plays a card.
    PLAY = "play"
    #: The shooter chooses ``add`` (others get the moon) or ``subtract`` (he loses it).
    MOON_CHOICE = "moon_choice"
    #: The hand is scored (or void, to be dealt again); ``next_hand()`` continues.
    HAND_OVER = "hand_over"
    #: Someone reached the target and the tie-break, if any, decided: no more actions.
    GAME_OVER = "game_over"


class IllegalMoveError(ValueError):
    """An action that the rules forbid here; the message names the rule broken.

    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1)
    >>> state.apply("AS")
    Traceback (most recent call last):
    ...
    engine.state.IllegalMoveError: seat 0 must lead 2C to the first trick
    """


class DealError(ValueError):
    """A deal that does not fit the rules (wrong counts, unknown or repeated cards).

    >>> GameState(RuleSet.from_preset("standard"), deal=[["2C"]] * 4)
    Traceback (most recent call last):
    ...
    engine.state.DealError: seat 0 was dealt 1 cards; these rules deal 13
    """

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        #: The seat whose cards are wrong, when one is to blame.
        self.seat = seat


@dataclass(frozen=True)
class Trick:
    """One completed trick: who led, the (seat, card) plays in order, and who won it.

    ``winner`` is None when Cancellation cancelled every card that could win.

    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1)
    >>> state.play_random(random.Random(1))
    >>> trick = state.history[-1].tricks[0]
    >>> trick.leader, trick.plays[0], trick.winner is not None
    (0, (0, '2C'), True)
    """

    leader: int
    plays: tuple[tuple[int, str], ...]
    winner: int | None

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trick, (self.leader, self.plays, self.winner))  # (see HandRecord.__reduce__)


#: A trick as the state keeps it: (leader, card indices in play order, winner or None).
#: The card sequence is never changed once logged.
RawTrick = tuple[int, Sequence[int], "int | None"]


def _tricks(raw: Sequence[RawTrick], n: int) -> list[Trick]:
    return [
        Trick(
            leader, tuple([((leader + i) % n, CARD_TEXTS[c]) for i, c in enumerate(cards)]), winner
        )
        for leader, cards, winner in raw
    ]


# The fields of a HandRecord, in the order of its constructor's arguments.
_HAND_RECORD_FIELDS: Final = (
    "hand_number",
    "attempt",
    "players",
    "deal",
    "kitty",
    "trump",
    "hakem",
    "passes",
    "raw_tricks",
    "unfinished_trick",
    "moon",
    "void",
    "points",
    "scores",
    "shooter",
    "kitty_taker",
)


class HandRecord:
    """Everything that happened in one finished (or void) hand, as plain values.

    A plain class with slots, compared field by field: one is made per hand, rollouts
    included, and compiled (mypyc) it is a native class, made without a Python call.

    >>> state = GameState(RuleSet.from_preset("standard"), seed=3)
    >>> state.play_random(random.Random(3))
    >>> hand = state.history[-1]
    >>> sum(hand.points), len(hand.plays), hand.to_json()["plays"][0]
    (26, 52, '2C')
    """

    __slots__ = _HAND_RECORD_FIELDS

    hand_number: int
    attempt: int
    players: int
    deal: tuple[int, ...]
    kitty: int
    trump: int | None
    hakem: int | None
    passes: tuple[tuple[int, ...], ...] | None
    raw_tricks: tuple[RawTrick, ...]
    unfinished_trick: tuple[int, ...]
    moon: str | None
    void: bool
    points: tuple[int, ...]
    scores: tuple[int, ...]
    shooter: int | None
    kitty_taker: int | None

    def __init__(
        self,
        hand_number: int,
        attempt: int,
        players: int,
        deal: tuple[int, ...],
        kitty: int,
        trump: int | None,
        hakem: int | None,
        passes: tuple[tuple[int, ...], ...] | None,
        raw_tricks: tuple[RawTrick, ...],
        unfinished_trick: tuple[int, ...],
        moon: str | None,
        void: bool,
        points: tuple[int, ...],
        scores: tuple[int, ...],
        shooter: int | None,
        kitty_taker: int | None,
    ) -> None:
        self.hand_number = hand_number
        self.attempt = attempt
        self.players = players
        self.deal = deal
        self.kitty = kitty
        self.trump = trump
        self.hakem = hakem
        self.passes = passes
        self.raw_tricks = raw_tricks
        self.unfinished_trick = unfinished_trick
        self.moon = moon
        self.void = void
        self.points = points
        self.scores = scores
        self.shooter = shooter
        self.kitty_taker = kitty_taker

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _HAND_RECORD_FIELDS)

    def __reduce__(self) -> tuple[Any, ...]:
        # Spelled out for pickle (a process pool's): a class compiled by mypyc has no
        # default way back, and this is the pure build's too.
        return (HandRecord, self._values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandRecord):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # (equal by value, yet not frozen)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in _HAND_RECORD_FIELDS)
        return f"HandRecord({fields})"

    @property
    def plays(self) -> tuple[int, ...]:
        """Card indices in the order played (a void hand ends in an unfinished trick)."""
        return tuple(c for _, cards, _ in self.raw_tricks for c in cards) + self.unfinished_trick

    @property
    def tricks(self) -> list[Trick]:
        """The completed tricks of the hand."""
        return _tricks(self.raw_tricks, self.players)

    def to_json(self) -> dict[str, Any]:
        """The hand's entry of the game record (see :mod:`engine.record`)."""
        hand: dict[str, Any] = {"deal": [cards_to_texts_multi(m) for m in self.deal]}
        if self.kitty:
            hand["kitty"] = cards_to_texts_multi(self.kitty)
        if self.trump is not None:
            hand["trump"] = SUITS[self.trump]
        if self.passes is not None:
            hand["passes"] = [[CARD_TEXTS[c] for c in p] for p in self.passes]
        hand["plays"] = [CARD_TEXTS[c] for c in self.plays]
        if self.moon is not None:
            hand["moon"] = self.moon
        if self.void:
            hand["void"] = True
        return hand


try:  # (read by mypyc when it compiles; where it is not installed, nothing to do)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover

    def mypyc_attr(*attrs: object, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


@mypyc_attr(allow_interpreted_subclasses=True)  # (the SDK's View adds the decision and clock)
@dataclass(frozen=True)
class Observation:
    """What one seat may know: its own cards and everything public, never others' cards.

    Card lists are sorted texts. ``legal`` is empty unless it is this seat's turn.

    >>> view = GameState(RuleSet.from_preset("standard"), seed=1).observation(0)
    >>> view.seat, len(view.hand), view.pass_direction, view.pass_offset, view.legal == view.hand
    (0, 13, 'left', 1, True)
    >>> persian = GameState(RuleSet.from_preset("persian"), seed=1).observation(0)
    >>> persian.pass_direction, persian.pass_offset  # counterclockwise: right is the next seat
    ('right', 1)
    """

    #: This seat, 0..players-1 (seats play in increasing order).
    seat: int
    #: The rules of the game.
    rules: RuleSet
    #: The game's phase (a :class:`Phase` value) and the seat to act (None when no one is).
    phase: str
    current_seat: int | None
    #: Hand number, 0-based (a redealt hand keeps its number).
    hand_number: int
    #: The cards in this seat's hand, sorted.
    hand: list[str]
    #: The actions allowed now, sorted (cards to pass or play, suits, or ``add``/``subtract``);
    #: empty unless it is this seat's turn.
    legal: list[str]
    #: The trick so far: (seat, card) in play order.
    trick: list[tuple[int, str]]
    #: Every completed trick of this hand.
    tricks: list[Trick]
    #: The seat that leads the current trick (None outside play).
    leader: int | None
    #: Card points each seat has taken this hand (a hidden kitty not counted).
    points_taken: list[int]
    #: Game totals before this hand.
    totals: list[int]
    #: ``left``, ``right``, ``across`` or ``hold``, as the rules name it (which seat is on the
    #: left depends on ``rules.direction``).
    pass_direction: str
    #: Seats onward in play order the passed cards go: this seat's go to seat
    #: ``(seat + pass_offset) % players``; 0 on a hold hand.
    pass_offset: int
    #: The cards this seat passed, and those it received (after the exchange).
    passed: list[str]
    received: list[str]
    hearts_broken: bool
    #: Hokm: the trump suit (``C D H S``) once declared, and the hakem's seat.
    trump: str | None
    hakem: int | None
    #: The kitty's size and who takes it.
    kitty_size: int
    kitty_taker: int | None
    #: Cards each seat still holds.
    cards_left: list[int]
    #: At the end of a hand: what it added to each total.
    scores: list[int] | None = None
    #: The kitty's cards, shown once the hand is over.
    kitty: list[str] = field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        values = tuple(getattr(self, f.name) for f in fields(self))
        return (Observation, values)  # (see HandRecord.__reduce__)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: every field by name (rules as their spec, tricks as objects)."""
        # Spelled out in the order of the fields (a test checks it): one is sent to a bot at
        # every decision of every match.
        return {
            "seat": self.seat,
            "rules": self.rules.to_spec(),
            "phase": self.phase,
            "current_seat": self.current_seat,
            "hand_number": self.hand_number,
            "hand": self.hand,
            "legal": self.legal,
            "trick": [[seat, card] for seat, card in self.trick],
            "tricks": [
                {
                    "leader": t.leader,
                    "plays": [[seat, card] for seat, card in t.plays],
                    "winner": t.winner,
                }
                for t in self.tricks
            ],
            "leader": self.leader,
            "points_taken": self.points_taken,
            "totals": self.totals,
            "pass_direction": self.pass_direction,
            "pass_offset": self.pass_offset,
            "passed": self.passed,
            "received": self.received,
            "hearts_broken": self.hearts_broken,
            "trump": self.trump,
            "hakem": self.hakem,
            "kitty_size": self.kitty_size,
            "kitty_taker": self.kitty_taker,
            "cards_left": self.cards_left,
            "scores": self.scores,
            "kitty": self.kitty,
        }


#: The ``deal`` that makes :class:`GameState` leave its fields unset, for its own methods
#: that fill them in (a compiled class has no way round ``__init__``).
_BLANK: Final[list[list[str]]] = []


#: Every attribute of a game state (its slots): what a clone copies and a pickle holds.
_STATE_FIELDS: Final = (
    "rules",
    "seed",
    "n",
    "hand_number",
    "attempt",
    "phase",
    "current",
    "hands",
    "dealt",
    "kitty",
    "kitty_taker",
    "taken",
    "carry",
    "pass_offset",
    "pass_masks",
    "pass_lists",
    "trick_cards",
    "leader",
    "led_suit",
    "win_key",
    "win_seat",
    "tricks_done",
    "trick_log",
    "hearts_broken",
    "trump",
    "hakem",
    "totals",
    "history",
    "pending_points",
    "shooter",
    "moon_choice",
    "winners",
    "first_lead",
    "_legal",
    "_point_mask",
    "_heart_mask",
    "_breaks_mask",
    "_hand_size",
    "_cancel",
    "_suit_masks",
)


class GameState:
    """A game in progress. Create with the rules and a seed (or explicit deals).

    ``deal`` (with ``kitty``) replaces the seeded deal of the first hand; later hands are
    dealt from the seed unless :meth:`next_hand` is given a deal. The attributes are the
    referee's whole view (every hand, as masks); a bot gets :meth:`observation` instead.

    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1)
    >>> state.current_seat, state.legal_actions()
    (0, ['2C'])
    >>> state.apply("2C")
    >>> state.plays(), state.current_seat
    (['2C'], 1)
    >>> copy = state.clone()
    >>> copy.play_random(random.Random(0))
    >>> copy.phase, state.phase
    (<Phase.HAND_OVER: 'hand_over'>, <Phase.PLAY: 'play'>)
    >>> state.to_record()["hands"][0]["plays"]
    ['2C']
    """

    __slots__ = _STATE_FIELDS

    rules: RuleSet
    seed: int | None
    n: int
    hand_number: int
    attempt: int
    phase: Phase
    current: int
    hands: list[int]
    dealt: tuple[int, ...]
    kitty: int
    kitty_taker: int | None
    taken: list[int]
    carry: int
    pass_offset: int
    pass_masks: list[int]
    pass_lists: list[list[int]]
    trick_cards: list[int]
    leader: int
    led_suit: int
    win_key: int
    win_seat: int
    tricks_done: int
    trick_log: list[RawTrick]
    hearts_broken: bool
    trump: int | None
    hakem: int | None
    totals: list[int]
    history: list[HandRecord]
    pending_points: tuple[int, ...]
    shooter: int | None
    moon_choice: str | None
    winners: list[int]
    first_lead: int
    _legal: int
    _point_mask: int
    _heart_mask: int
    _breaks_mask: int
    _hand_size: int
    _cancel: bool
    _suit_masks: tuple[int, ...]  # SUIT_MASKS, or its 52-bit half without a second deck

    def __init__(
        self,
        rules: RuleSet,
        seed: int | None = None,
        *,
        deal: Sequence[Sequence[str]] | None = None,
        kitty: Sequence[str] | None = None,
    ) -> None:
        if deal is _BLANK:
            return  # clone() and at_play() set every field themselves
        self._setup(rules, seed)
        hands, kitty_mask = self._obtain_deal(deal, kitty)
        self._start_hand(hands, kitty_mask)

    def _setup(
        self, rules: RuleSet, seed: int | None, hand_number: int = 0, totals: Sequence[int] = ()
    ) -> None:
        """The game-level fields, before any hand is dealt."""
        self.rules = rules
        self.seed = seed
        self.n = rules.players
        derived = rules._derived
        self._point_mask = derived.point_mask
        self._heart_mask = derived.heart_mask
        self._breaks_mask = (
            derived.heart_mask | derived.queen_mask
            if rules.hearts_break == "heart_or_queen"
            else derived.heart_mask
        )
        self._hand_size = derived.hand_size
        self._cancel = rules.cancellation
        self._suit_masks = SUIT_MASKS if rules.cancellation else SUIT_MASKS_ONE_DECK
        self.hand_number = hand_number
        self.attempt = 0
        self.totals = list(totals) if totals else [0] * self.n
        self.history = []
        self.hakem = None
        self.winners = []

    @classmethod
    def at_play(
        cls,
        rules: RuleSet,
        hands: Sequence[Sequence[str]],
        *,
        kitty: Sequence[str] | None = None,
        hand_number: int = 0,
        totals: Sequence[int] | None = None,
        trump: str | None = None,
        hakem: int | None = None,
        plays: Sequence[str] = (),
    ) -> GameState:
        """A hand that starts at its first trick with these hands (as after passing), then
        ``plays`` applied: how a bot's simulation rebuilds a position it has sampled.

        >>> rules = RuleSet.from_preset("standard")
        >>> state = GameState(rules, seed=1)
        >>> again = GameState.at_play(rules, [state.hand_of(s) for s in range(4)], plays=["2C"])
        >>> again.phase.value, again.plays()
        ('play', ['2C'])
        """
        state = cls(rules, None, deal=_BLANK)
        state._setup(rules, None, hand_number, totals or ())
        state.hakem = hakem
        masks, kitty_mask = parse_deal(rules, hands, kitty)
        state._start_hand(masks, kitty_mask, at_play=True)
        if trump is not None:
            state.trump = SUITS.index(trump)
        for card in plays:
            state.apply(card)
        return state

    # --- public API ----------------------------------------------------------------------

    @property
    def current_seat(self) -> int | None:
        """The seat to act, or None when the hand or the game is over."""
        if self.phase is _HAND_OVER or self.phase is _GAME_OVER:
            return None
        return self.current

    def legal_actions(self) -> list[str]:
        """The actions the current seat may take, sorted; empty when nobody is to act."""
        phase = self.phase
        if phase is _PLAY or phase is _PASS:
            m = self._legal
            if m < 0:
                if phase is _PLAY:
                    m = self._legal = self._legal_play_mask()
                else:
                    m = self._legal = self.hands[self.current] & ~self.pass_masks[self.current]
            if self._cancel:
                m = (m | (m >> DECK_SIZE)) & FULL_DECK
            return texts_of(m)
        if phase is Phase.DECLARE_TRUMP:
            return list(SUITS)
        if phase is Phase.MOON_CHOICE:
            return list(_MOON_ACTIONS)
        return []

    def legal_mask(self) -> int:
        """The legal cards (pass or play) of the current seat as a mask of card indices."""
        legal = self._legal
        if legal < 0:
            if self.phase is _PLAY:
                legal = self._legal_play_mask()
            elif self.phase is _PASS:
                legal = self.hands[self.current] & ~self.pass_masks[self.current]
            else:
                legal = 0
            self._legal = legal
        return legal

    def apply(self, action: str, seat: int | None = None) -> None:
        """Take ``action`` for the current seat (``seat``, when given, must be that seat).

        Raises :class:`IllegalMoveError` naming the rule broken; the state is then unchanged.
        """
        phase = self.phase
        if seat is None and (phase is _PLAY or phase is _PASS):  # the hot path of simulations
            index = _INDEX.get(action)
            if index is not None:
                legal = self._legal
                if legal < 0:
                    legal = self.legal_mask()
                if legal >> index & 1:
                    if phase is _PLAY:
                        self._play(index)
                    else:
                        self._pass(index)
                    return
        if seat is not None and seat != self.current_seat:
            raise IllegalMoveError(self._not_your_turn(seat))
        if phase is _PLAY or phase is _PASS:
            index = _INDEX.get(action) if isinstance(action, str) else None
            if index is None:
                try:
                    index = card_index(action)
                except CardError as exc:
                    raise IllegalMoveError(str(exc)) from None
            legal = self.legal_mask()
            if not legal >> index & 1:
                if self._cancel and legal >> (index + DECK_SIZE) & 1:
                    index += DECK_SIZE
                else:
                    raise IllegalMoveError(self._explain_illegal(index))
            if phase is _PLAY:
                self._play(index)
            else:
                self._pass(index)
        elif phase is Phase.DECLARE_TRUMP:
            self._declare(action)
        elif phase is Phase.MOON_CHOICE:
            if action not in _MOON_ACTIONS:
                raise IllegalMoveError(
                    f"seat {self.current} shot the moon and must choose 'add' or 'subtract', "
                    f"not {action!r}"
                )
            self._settle_hand(action)
        elif phase is _HAND_OVER:
            raise IllegalMoveError(
                f"hand {self.hand_number} is over: call next_hand() to deal the next one"
            )
        else:
            raise IllegalMoveError("the game is over")

    def apply_index(self, index: int) -> None:
        """Pass or play the card with this index (either deck); it must be legal."""
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        if not legal >> index & 1:
            if self.phase is not _PLAY and self.phase is not _PASS:
                raise IllegalMoveError(f"no card can be played now ({self.phase.value})")
            raise IllegalMoveError(self._explain_illegal(index % DECK_SIZE))
        if self.phase is _PLAY:
            self._play(index)
        else:
            self._pass(index)

    def play_random(self, rng: random.Random) -> None:
        """Finish the current hand with uniformly random legal moves drawn from ``rng``.

        The same moves as repeatedly applying a random legal card, much faster: this is the
        rollout of Monte-Carlo bots. Decisions other than cards (trump, moon) are random too.
        """
        choose = rng.getrandbits
        while True:
            phase = self.phase
            if phase is _PLAY:
                rollout.play_out(self, choose)
            elif phase is _PASS:
                rollout.pass_out(self, choose)
            elif phase is _HAND_OVER or phase is _GAME_OVER:
                return
            else:
                options = self.legal_actions()
                self.apply(options[choose(32) % len(options)])

    def next_hand(
        self, deal: Sequence[Sequence[str]] | None = None, kitty: Sequence[str] | None = None
    ) -> None:
        """Deal the next hand (from the seed, or ``deal``); only in ``Phase.HAND_OVER``."""
        if self.phase is not _HAND_OVER:
            raise IllegalMoveError(
                "the game is over"
                if self.phase is _GAME_OVER
                else f"hand {self.hand_number} is not over yet ({self.phase.value})"
            )
        if self.history[-1].void:
            self.attempt += 1
        else:
            self.hand_number += 1
            self.attempt = 0
        hands, kitty_mask = self._obtain_deal(deal, kitty)
        self._start_hand(hands, kitty_mask)

    @property
    def is_game_over(self) -> bool:
        """True once the game has a winner (or winners)."""
        return self.phase is _GAME_OVER

    @property
    def ended_at_hand_cap(self) -> bool:
        """True when the game ended because it reached :data:`MAX_HANDS`, not its target.

        >>> rules = RuleSet.from_preset("standard", heart_points=[0] * 13, queen_points=0)
        >>> state = GameState(rules, seed=1)
        >>> while not state.is_game_over:
        ...     state.play_random(random.Random(1))
        ...     if not state.is_game_over:
        ...         state.next_hand()
        >>> len(state.history), state.winners, state.ended_at_hand_cap
        (200, [0, 1, 2, 3], True)
        """
        if self.phase is not _GAME_OVER or len(self.history) < MAX_HANDS:
            return False
        return self.history[-1].void or max(self.totals) < self.rules.target or not self._winners()

    def hand_of(self, seat: int) -> list[str]:
        """The cards ``seat`` holds now (referee's view: use :meth:`observation` for bots)."""
        return cards_to_texts_multi(self.hands[seat])

    def points_taken(self) -> list[int]:
        """Card points each seat has taken so far this hand (kitty included once taken)."""
        return [self._points(mask) for mask in self.taken]

    def plays(self) -> list[str]:
        """Every card played this hand, in order."""
        return [CARD_TEXTS[c] for c in self._play_indices()]

    def completed_tricks(self, start: int = 0) -> list[Trick]:
        """The tricks of this hand played out, oldest first, from the ``start``-th on (what
        every seat's :meth:`observation` shows as ``tricks``)."""
        return _tricks(self.trick_log[start:], self.n)

    def open_trick(self) -> list[tuple[int, str]]:
        """The (seat, card) plays of the trick being played, in order (empty between tricks)."""
        n, leader = self.n, self.leader
        return [((leader + i) % n, CARD_TEXTS[c]) for i, c in enumerate(self.trick_cards)]

    def clone(self) -> GameState:
        """An independent copy, for simulation."""
        # Spelled out rather than looped over __slots__: clones are made by the thousand.
        # (Not object.__new__: a class compiled with mypyc is made through its __init__.)
        other = GameState(self.rules, None, deal=_BLANK)
        other.rules = self.rules
        other.seed = self.seed
        other.n = self.n
        other.hand_number = self.hand_number
        other.attempt = self.attempt
        other.phase = self.phase
        other.current = self.current
        other.dealt = self.dealt
        other.kitty = self.kitty
        other.kitty_taker = self.kitty_taker
        other.carry = self.carry
        other.pass_offset = self.pass_offset
        other.leader = self.leader
        other.led_suit = self.led_suit
        other.win_key = self.win_key
        other.win_seat = self.win_seat
        other.tricks_done = self.tricks_done
        other.hearts_broken = self.hearts_broken
        other.trump = self.trump
        other.hakem = self.hakem
        other.pending_points = self.pending_points
        other.shooter = self.shooter
        other.moon_choice = self.moon_choice
        other.first_lead = self.first_lead
        other._legal = self._legal
        other._point_mask = self._point_mask
        other._heart_mask = self._heart_mask
        other._breaks_mask = self._breaks_mask
        other._hand_size = self._hand_size
        other._cancel = self._cancel
        other._suit_masks = self._suit_masks
        other.hands = self.hands[:]
        other.taken = self.taken[:]
        if self.phase is _PASS or self.phase is Phase.DECLARE_TRUMP:
            other.pass_masks = self.pass_masks[:]
            other.pass_lists = [p[:] for p in self.pass_lists]
        else:  # the passes are over: no method changes these lists again
            other.pass_masks = self.pass_masks
            other.pass_lists = self.pass_lists
        other.trick_cards = self.trick_cards[:]
        other.trick_log = self.trick_log[:]
        other.totals = self.totals[:]
        other.history = self.history[:]
        other.winners = self.winners[:]
        return other

    def __reduce__(self) -> tuple[Any, ...]:
        # (see HandRecord.__reduce__): every slot, put back by _unpickled_state
        return (_unpickled_state, (tuple(getattr(self, name) for name in _STATE_FIELDS),))

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may see now. Other seats' cards appear only once played."""
        if not 0 <= seat < self.n:
            raise ValueError(f"seat must be 0..{self.n - 1}, not {seat}")
        over = self.phase is _HAND_OVER or self.phase is _GAME_OVER
        exchanged = self.phase is not _PASS and self.phase is not Phase.DECLARE_TRUMP
        received = 0
        if self.pass_offset and exchanged:
            received = self.pass_masks[(seat - self.pass_offset) % self.n]
        last = self.history[-1] if over and self.history else None
        hidden_kitty = 0 if last is not None else self.kitty
        n = self.n
        rules = self.rules
        return Observation(
            seat=seat,
            rules=rules,
            phase=self.phase.value,
            current_seat=self.current_seat,
            hand_number=self.hand_number,
            hand=cards_to_texts_multi(self.hands[seat]),
            legal=self.legal_actions() if self.current_seat == seat else [],
            trick=self.open_trick(),
            tricks=_tricks(self.trick_log, n),
            leader=self.leader if self.phase is _PLAY else None,
            points_taken=[self._points(mask & ~hidden_kitty) for mask in self.taken],
            totals=self.totals[:],
            pass_direction=rules.pass_direction(self.hand_number),
            # (from the rules, not self.pass_offset: a state built at_play skipped the passing)
            pass_offset=rules.pass_offset(self.hand_number) if rules.pass_count else 0,
            passed=sorted(CARD_TEXTS[c] for c in self.pass_lists[seat]),
            received=cards_to_texts_multi(received),
            hearts_broken=self.hearts_broken,
            trump=None if self.trump is None else SUITS[self.trump],
            hakem=self.hakem if self.rules.hokm else None,
            kitty_size=self.rules.kitty,
            kitty_taker=self.kitty_taker,
            cards_left=[_bit_count(h) for h in self.hands],
            scores=list(last.scores) if last is not None else None,
            kitty=cards_to_texts_multi(self.kitty) if last is not None else [],
        )

    def current_hand_json(self) -> dict[str, Any] | None:
        """The record entry of the hand in progress, or None between hands."""
        if self.phase is _HAND_OVER or self.phase is _GAME_OVER:
            return None
        hand: dict[str, Any] = {"deal": [cards_to_texts_multi(m) for m in self.dealt]}
        if self.kitty:
            hand["kitty"] = cards_to_texts_multi(self.kitty)
        if self.trump is not None:
            hand["trump"] = SUITS[self.trump]
        if self.pass_offset and self.phase is not Phase.DECLARE_TRUMP:
            # While passing, the seats that have begun to choose (the last one partly).
            seats = self.current + 1 if self.phase is _PASS else self.n
            if seats > 1 or self.pass_lists[0]:
                hand["passes"] = [[CARD_TEXTS[c] for c in p] for p in self.pass_lists[:seats]]
        hand["plays"] = self.plays()
        return hand

    def to_record(self) -> dict[str, Any]:
        """The game record (JSON form) of everything played so far."""
        record: dict[str, Any] = {"rules": self.rules.to_spec()}
        if self.seed is not None:
            record["seed"] = self.seed
        hands = [h.to_json() for h in self.history]
        current = self.current_hand_json()
        if current is not None:
            hands.append(current)
        record["hands"] = hands
        return record

    # --- dealing and the start of a hand ----------------------------------------------------

    def _obtain_deal(
        self, deal: Sequence[Sequence[str]] | None, kitty: Sequence[str] | None
    ) -> tuple[list[int], int]:
        if deal is None:
            if self.seed is None:
                raise DealError(f"hand {self.hand_number} has no deal and the game has no seed")
            return deal_masks(self.rules, self.seed, self.hand_number, self.attempt)
        return parse_deal(self.rules, deal, kitty)

    def _start_hand(self, hands: list[int], kitty: int, *, at_play: bool = False) -> None:
        n = self.n
        rules = self.rules
        self.hands = hands
        self.dealt = tuple(hands)
        self.kitty = kitty
        self.kitty_taker = None
        self.taken = [0] * n
        self.carry = 0
        self.pass_offset = rules.pass_offset(self.hand_number) if rules.pass_count else 0
        self.pass_masks = [0] * n
        self.pass_lists = [[] for _ in range(n)]
        self.trick_cards = []
        self.trick_log = []
        self.tricks_done = 0
        self.hearts_broken = rules.hearts_break == "no_broken"
        self.trump = None
        self.pending_points = ()
        self.shooter = None
        self.moon_choice = None
        self.leader = 0
        self.led_suit = -1
        self.win_key = -1
        self.win_seat = -1
        self.first_lead = -1
        self._legal = -1
        if at_play:
            self.pass_offset = 0
            self._start_play()
        elif rules.hokm:
            if self.hakem is None:
                self.hakem = self._lowest_club_holder()[0]
            self.phase = Phase.DECLARE_TRUMP
            self.current = self.hakem
        else:
            self._start_passing()

    def _start_passing(self) -> None:
        if self.pass_offset:
            self.phase = _PASS
            self.current = 0
            self._legal = -1
        else:
            self._start_play()

    def _lowest_club_holder(self) -> tuple[int, int]:
        union = 0
        for hand in self.hands:
            union |= hand
        for club in _CLUBS_BY_RANK:
            for index in (club, club + DECK_SIZE):
                if union >> index & 1:
                    for seat, hand in enumerate(self.hands):
                        if hand >> index & 1:
                            return seat, index
        raise AssertionError("no club in play")  # RuleSet keeps at least one club

    def _start_play(self) -> None:
        self.phase = _PLAY
        if self._cancel:
            # Cancellation: the player after the dealer (seat k mod n deals hand k) leads.
            leader = (self.hand_number + 1) % self.n
        else:
            leader, self.first_lead = self._lowest_club_holder()
        self._begin_trick(leader)

    def _begin_trick(self, leader: int) -> None:
        self.leader = leader
        self.current = leader
        self._legal = -1
        if (
            self.rules.only_hearts_lead == "redeal"
            and not self.hearts_broken
            and not self.hands[leader] & ~self._heart_mask
        ):
            self._void_hand()

    # --- actions ---------------------------------------------------------------------------

    def _declare(self, action: str) -> None:
        if not isinstance(action, str) or len(action) != 1 or action.upper() not in SUITS:
            raise IllegalMoveError(
                f"seat {self.current} is the hakem and must declare a trump suit "
                f"(C, D, H or S), not {action!r}"
            )
        self.trump = SUITS.index(action.upper())
        self._start_passing()

    def _pass(self, index: int) -> None:
        seat = self.current
        # (Items of lists of ints read and written apart: compiled, `masks[seat] |= bit` is
        # a generic operation on objects.)
        masks = self.pass_masks
        masks[seat] = masks[seat] | 1 << index
        chosen = self.pass_lists[seat]
        chosen.append(index)
        self._legal = -1
        if len(chosen) < self.rules.pass_count:
            return
        if seat + 1 < self.n:
            self.current = seat + 1
            return
        self._exchange()

    def _play(self, index: int) -> None:
        seat = self.current
        hands = self.hands
        hands[seat] = hands[seat] ^ 1 << index
        cards = self.trick_cards
        cards.append(index)
        if self._breaks_mask >> index & 1:
            self.hearts_broken = True
        # The winner so far: trumps outrank the led suit; other suits never win.
        suit = CARD_SUIT[index]
        trump = self.trump
        trumps = trump is not None and suit == trump
        if len(cards) == 1:
            self.led_suit = suit
            self.win_key = 20 + CARD_RANK[index] if trumps else CARD_RANK[index]
            self.win_seat = seat
        elif trumps:
            if 20 + CARD_RANK[index] > self.win_key:
                self.win_key = 20 + CARD_RANK[index]
                self.win_seat = seat
        elif suit == self.led_suit and self.win_key < 20 and CARD_RANK[index] > self.win_key:
            self.win_key = CARD_RANK[index]
            self.win_seat = seat
        self._legal = -1
        if len(cards) == self.n:
            self._finish_trick()
        else:
            self.current = seat + 1 if seat + 1 < self.n else 0

    def _exchange(self) -> None:
        hands, masks, n, offset = self.hands, self.pass_masks, self.n, self.pass_offset
        for s in range(n):
            hands[s] = hands[s] & ~masks[s]
        for s in range(n):
            to = (s + offset) % n
            hands[to] = hands[to] | masks[s]
        self._start_play()

    def _legal_play_mask(self) -> int:
        hand = self.hands[self.current]
        if self.trick_cards:
            follow = hand & self._suit_masks[self.led_suit]
            if follow:
                return follow
            if self.tricks_done == 0 and self.rules.no_points_first_trick:
                return self._first_trick_discard(hand)
            return hand
        if self.tricks_done == 0:
            if self.first_lead >= 0:
                return 1 << self.first_lead
            if self.rules.no_points_first_trick:
                return self._first_trick_discard(hand)
        if not self.hearts_broken:
            safe = hand & ~self._heart_mask
            if safe:
                return safe
        return hand

    def _first_trick_discard(self, hand: int) -> int:
        safe = hand & ~self._point_mask
        if safe:
            return safe
        if self.rules.first_trick_forced == "hearts_first":
            hearts = hand & self._heart_mask
            if hearts:
                return hearts
        return hand

    def _trick_winner(self) -> int | None:
        if not self._cancel:
            return self.win_seat
        faces = [c % DECK_SIZE for c in self.trick_cards]
        best, winner = -1, None
        for i, (card, face) in enumerate(zip(self.trick_cards, faces)):
            if faces.count(face) > 1:
                continue  # identical cards cancel each other
            suit = CARD_SUIT[card]
            if suit == self.trump:
                key = 20 + CARD_RANK[card]
            elif suit == self.led_suit:
                key = CARD_RANK[card]
            else:
                continue
            if key > best:
                best, winner = key, (self.leader + i) % self.n
        return winner

    def _finish_trick(self) -> None:
        winner = self._trick_winner()
        cards = self.trick_cards
        won = 0
        for card in cards:
            won |= 1 << card
        self.trick_log.append((self.leader, tuple(cards), winner))
        self.trick_cards = []
        self.tricks_done += 1
        last = self.tricks_done == self._hand_size
        if winner is None:
            # Nobody wins: the cards wait for the next trick's winner (nobody after the last).
            self.carry |= won
            next_leader = self.leader
        else:
            won |= self.carry
            self.carry = 0
            taken = self.taken
            taken[winner] = taken[winner] | won
            if self.kitty and self.kitty_taker is None:
                self._maybe_take_kitty(winner, won, last)
            next_leader = winner
        if last:
            self._finish_hand()
        else:
            self.leader = self.current = next_leader
            self._legal = -1
            if self.rules.only_hearts_lead == "redeal":
                self._begin_trick(next_leader)

    def _maybe_take_kitty(self, winner: int, won: int, last: bool) -> None:
        rule = self.rules.kitty_taker
        if (
            rule == "first_trick"
            or (rule == "last_trick" and last)
            or (rule == "first_points_trick" and won & self._point_mask)
            or (rule == "first_heart_trick" and won & self._heart_mask)
        ):
            self.kitty_taker = winner
            self.taken[winner] |= self.kitty

    # --- the end of a hand --------------------------------------------------------------------

    def _points(self, mask: int) -> int:
        derived = self.rules._derived
        if derived.uniform_hearts is not None:
            return (
                _bit_count(mask & derived.heart_mask) * derived.uniform_hearts
                + _bit_count(mask & derived.queen_mask) * self.rules.queen_points
            )
        return _points(mask & self._point_mask, derived.point_values)

    def _play_indices(self) -> list[int]:
        return [c for _, cards, _ in self.trick_log for c in cards] + self.trick_cards

    def _void_hand(self) -> None:
        """Only hearts to lead before they are broken, under the redeal rule: deal again."""
        zeros = tuple([0] * self.n)
        self._record_hand(points=zeros, scores=zeros, void=True)
        if len(self.history) >= MAX_HANDS:
            self.winners = self._lowest()
        self.phase = _GAME_OVER if self.winners else _HAND_OVER
        self._legal = -1

    def _finish_hand(self) -> None:
        point_mask = self._point_mask
        derived = self.rules._derived
        per_heart = derived.uniform_hearts
        if per_heart is not None:
            hearts, queens, queen_points = (
                derived.heart_mask,
                derived.queen_mask,
                self.rules.queen_points,
            )
            self.pending_points = tuple(
                [
                    _bit_count(m & hearts) * per_heart + _bit_count(m & queens) * queen_points
                    for m in self.taken
                ]
            )
        else:
            self.pending_points = tuple([self._points(m) for m in self.taken])
        self.shooter = None
        if self.rules.moon != "off" and point_mask:
            for seat, mask in enumerate(self.taken):
                if mask & point_mask == point_mask:
                    self.shooter = seat
        if self.shooter is not None and self.rules.moon == "choice":
            self.phase = Phase.MOON_CHOICE
            self.current = self.shooter
            self._legal = -1
            return
        self._settle_hand(self.rules.moon if self.shooter is not None else None)

    def _settle_hand(self, moon: str | None) -> None:
        rules = self.rules
        n = self.n
        scores = list(self.pending_points)
        if self.shooter is not None and moon is not None:
            amount = rules.moon_amount
            if moon == "add":
                scores = [0 if s == self.shooter else amount for s in range(n)]
            else:
                scores = [-amount if s == self.shooter else 0 for s in range(n)]
        if rules.jd_bonus:
            jd = rules._derived.jd_mask
            for seat, mask in enumerate(self.taken):
                scores[seat] = scores[seat] + rules.jd_bonus * _bit_count(mask & jd)
        self.moon_choice = moon if rules.moon == "choice" and self.shooter is not None else None
        totals = self.totals
        for seat in range(n):
            totals[seat] = totals[seat] + scores[seat]
        declared = self.hakem  # this hand's hakem, recorded with it
        if rules.hokm:
            queens = rules._derived.queen_mask
            for seat, mask in enumerate(self.taken):
                if mask & queens:
                    # Seed 001 rule 8: the player to the right of the QS's taker (the next
                    # one in play order when play goes counterclockwise, as in hokm_40).
                    self.hakem = (seat + rules.side_offset("right")) % n
                    break
        self._record_hand(
            points=self.pending_points, scores=tuple(scores), void=False, hakem=declared
        )
        self.winners = self._winners() if max(totals) >= rules.target else []
        if not self.winners and len(self.history) >= MAX_HANDS:
            self.winners = self._lowest()
        self.phase = _GAME_OVER if self.winners else _HAND_OVER
        self._legal = -1

    def _lowest(self) -> list[int]:
        low = min(self.totals)
        return [s for s in range(self.n) if self.totals[s] == low]

    def _winners(self) -> list[int]:
        totals = self.totals
        low = min(totals)
        tied = [s for s in range(self.n) if totals[s] == low]
        if len(tied) == 1 or self.rules.tie_break == "shared":
            return tied
        if self.rules.tie_break == "highest_diamond":
            best = {s: _highest_diamond(self.taken[s]) for s in tied}
            top = max(best.values())
            holders = [s for s in tied if best[s] == top]
            if top >= 0 and len(holders) == 1:
                return holders
        return []  # another hand decides

    def _record_hand(
        self,
        *,
        points: tuple[int, ...],
        scores: tuple[int, ...],
        void: bool,
        hakem: int | None = None,
    ) -> None:
        """Append the hand just ended to the history (``hakem``: the one who declared its
        trump, when the next hand's is already chosen)."""
        self.history.append(
            HandRecord(
                hand_number=self.hand_number,
                attempt=self.attempt,
                players=self.n,
                deal=self.dealt,
                kitty=self.kitty,
                trump=self.trump,
                hakem=(self.hakem if hakem is None else hakem) if self.rules.hokm else None,
                passes=tuple(map(tuple, self.pass_lists)) if self.pass_offset else None,
                raw_tricks=tuple(self.trick_log),
                unfinished_trick=tuple(self.trick_cards),
                moon=self.moon_choice,
                void=void,
                points=points,
                scores=scores,
                shooter=self.shooter,
                kitty_taker=self.kitty_taker,
            )
        )

    # --- messages ----------------------------------------------------------------------------

    def _not_your_turn(self, seat: int) -> str:
        if self.current_seat is None:
            return f"seat {seat} cannot act: the {'game' if self.is_game_over else 'hand'} is over"
        return f"it is seat {self.current}'s turn, not seat {seat}'s"

    def _explain_illegal(self, index: int) -> str:
        seat = self.current
        text = CARD_TEXTS[index]
        hand = self.hands[seat]
        held = hand >> index & 1 or hand >> (index + DECK_SIZE) & 1
        if self.phase is _PASS:
            if not held:
                return f"seat {seat} cannot pass {text}: not in hand"
            return f"seat {seat} has already chosen {text} to pass"
        if not held:
            return f"seat {seat} cannot play {text}: not in hand"
        suit = CARD_SUIT[index]
        if self.trick_cards:
            if hand & self._suit_masks[self.led_suit]:
                return f"seat {seat} must follow {SUIT_NAMES[self.led_suit]}"
            if (
                suit == HEARTS
                and self.rules.first_trick_forced == "hearts_first"
                and (hand & self._heart_mask)
            ):
                return f"seat {seat} must play a heart, not {text}, on the first trick"
            return (
                f"seat {seat} cannot play {text}: no hearts or QS on the first trick "
                f"while holding another card"
            )
        if self.tricks_done == 0:
            if self.first_lead >= 0:
                return f"seat {seat} must lead {CARD_TEXTS[self.first_lead]} to the first trick"
            return f"seat {seat} cannot lead {text}: no hearts or QS on the first trick"
        if suit == HEARTS and not self.hearts_broken:
            return f"seat {seat} cannot lead hearts: hearts are not broken"
        return f"seat {seat} cannot play {text} now"


# (Final: compiled, a module's names are otherwise looked up in its dict at each use.)
_PLAY: Final = Phase.PLAY
_PASS: Final = Phase.PASS
_HAND_OVER: Final = Phase.HAND_OVER
_GAME_OVER: Final = Phase.GAME_OVER


def _unpickled_state(values: tuple[Any, ...]) -> GameState:
    state = GameState(values[0], None, deal=_BLANK)
    for name, value in zip(_STATE_FIELDS, values):
        setattr(state, name, value)
    return state


def _count(mask: int) -> int:
    return _bit_count(mask)


def _points(mask: int, values: Sequence[int]) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += values[_INDEX_OF_BIT[low % 131]]
        mask ^= low
    return total


def _highest_diamond(mask: int) -> int:
    diamonds = mask & SUIT_MASKS[DIAMONDS]
    best = -1
    while diamonds:
        low = diamonds & -diamonds
        best = max(best, CARD_RANK[_INDEX_OF_BIT[low % 131]])
        diamonds ^= low
    return best


def parse_deal(
    rules: RuleSet, deal: Sequence[Sequence[str]], kitty: Sequence[str] | None = None
) -> tuple[list[int], int]:
    """Masks of a deal given as texts, checked against the rules; raises :class:`DealError`.

    Missing ``kitty`` is inferred as the cards in play that nobody was dealt.

    >>> from engine.deal import deal_texts
    >>> rules = RuleSet.from_preset("kitty")
    >>> hands, kitty = deal_texts(rules, 1, 0)
    >>> parse_deal(rules, hands)[1].bit_count()
    4
    """
    if not isinstance(deal, (list, tuple)) or len(deal) != rules.players:
        raise DealError(f"the deal must list the cards of {rules.players} seats")
    in_play = rules._derived.deck_mask
    used = 0
    hands = []
    for seat, cards in enumerate(deal):
        if not isinstance(cards, (list, tuple)):
            raise DealError(f"seat {seat}'s deal must be a list of cards", seat)
        if len(cards) != rules.hand_size:
            raise DealError(
                f"seat {seat} was dealt {len(cards)} cards; these rules deal {rules.hand_size}",
                seat,
            )
        hand = 0
        for text in cards:
            hand |= _take(text, used, in_play, f"seat {seat}'s deal", seat)
            used |= hand
        hands.append(hand)
    if kitty is None:
        kitty_mask = in_play & ~used
    else:
        if not isinstance(kitty, (list, tuple)):
            raise DealError("the kitty must be a list of cards")
        kitty_mask = 0
        for text in kitty:
            kitty_mask |= _take(text, used, in_play, "the kitty")
            used |= kitty_mask
    if _count(kitty_mask) != rules.kitty or used | kitty_mask != in_play:
        missing = cards_to_texts_multi(in_play & ~(used | kitty_mask))
        raise DealError(
            f"the deal leaves out {', '.join(missing) or 'nothing'} and sets aside "
            f"{_count(kitty_mask)} cards; these rules set aside {rules.kitty}"
        )
    return hands, kitty_mask


def _take(text: str, used: int, in_play: int, where: str, seat: int | None = None) -> int:
    try:
        index = card_index(text)
    except CardError as exc:
        raise DealError(f"{where}: {exc}", seat) from None
    for copy in (index, index + DECK_SIZE):
        bit = 1 << copy
        if in_play & bit and not used & bit:
            return bit
    if not in_play & (1 << index):
        raise DealError(f"{where}: {CARD_TEXTS[index]} is not in play under these rules", seat)
    raise DealError(f"{where}: {CARD_TEXTS[index]} is dealt more often than the deck holds", seat)


__all__ = [
    "GameState",
    "HandRecord",
    "IllegalMoveError",
    "Observation",
    "Phase",
    "Trick",
    "parse_deal",
    "DealError",
]


# The rollout fast path works on a game state's internals: it is imported last, once
# everything it uses is defined (it imports this module).
from engine import rollout  # noqa: E402
