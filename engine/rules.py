"""``RuleSet``: every setting of the game, from the three rule texts, and the named presets.

A ``RuleSet`` is frozen and validated on creation: inconsistent settings raise
:class:`RulesError` with a message saying what to change. Presets are starting points; any
setting can be overridden, and ``players=N`` applies the removal (or kitty) table and the
pass cycle of that player count.

>>> standard = RuleSet.from_preset("standard")
>>> standard.players, standard.pass_cycle, standard.hearts_break, standard.target
(4, ('left', 'right', 'across', 'hold'), 'heart_or_queen', 100)
>>> five = RuleSet.from_preset("standard", players=5)
>>> five.removed, five.hand_size, five.pass_cycle
(('2C', '2D'), 10, ('left', 'right'))
>>> RuleSet.from_preset("standard", players=8)
Traceback (most recent call last):
...
engine.rules.RulesError: 8 players need cancellation (6 to 11 players); without it 3 to 7 play
>>> RuleSet.from_spec({"preset": "persian", "target": 200}).to_spec()
{'preset': 'persian', 'target': 200}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from types import SimpleNamespace
from typing import Any, Final, Literal, get_args

from engine.cards import (
    CARD_RANK,
    CARD_SUIT,
    CARD_TEXTS,
    CLUBS,
    DECK_SIZE,
    DIAMONDS,
    HEARTS,
    SPADES,
    CardError,
    card_index,
)

Direction = Literal["left", "right", "across", "hold"]
PlayDirection = Literal["clockwise", "counterclockwise"]
MoonRule = Literal["add", "subtract", "choice", "off"]
HeartsBreak = Literal["heart", "heart_or_queen", "no_broken"]
OnlyHeartsLead = Literal["allow", "redeal"]
TieBreak = Literal["extra_hand", "highest_diamond", "shared"]
KittyTaker = Literal["first_points_trick", "first_trick", "last_trick", "first_heart_trick"]
FirstTrickForced = Literal["any", "hearts_first"]

#: Cards removed for each player count so that the deck divides evenly (seed 003, §2).
REMOVALS: Final[Mapping[int, tuple[str, ...]]] = {
    3: ("2D",),
    4: (),
    5: ("2C", "2D"),
    6: ("2D", "3C", "3D", "4C"),
    7: ("2D", "3C", "3D"),
}
#: Kitty sizes of the Kitty variant, which keeps the whole deck (seed 003).
KITTY_SIZES: Final[Mapping[int, int]] = {3: 1, 4: 4, 5: 2, 6: 4, 7: 3}

_STANDARD_CYCLE: Final[tuple[Direction, ...]] = ("left", "right", "across", "hold")
_PERSIAN_CYCLE: Final[tuple[Direction, ...]] = ("right", "left", "across", "hold")
_ONE_HEART_EACH: Final = (1,) * 13
# Seed 001's "54-point" values: 2..TH 1, JH 2, QH 3, KH 4, AH 10, and QS 17. They add up to 45,
# not the 54 the text announces; the listed values are what we implement.
_BLACK_LADY_54_HEARTS: Final = (1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 10)
_BLACK_LADY_40_HEARTS: Final = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 11)


class RulesError(ValueError):
    """A rule setting is unknown, malformed, or inconsistent with another.

    >>> RuleSet.from_preset("standard", players=3, pass_cycle=["across"])
    Traceback (most recent call last):
    ...
    engine.rules.RulesError: pass_cycle: nobody sits across with 3 players
    """


@dataclass(frozen=True)
class RuleSet:
    """The complete description of a game of Hearts. Build one with :meth:`from_preset`.

    >>> RuleSet.from_preset("omnibus").jd_bonus
    -10
    >>> RuleSet.from_preset("black_lady_54").total_points
    45
    >>> RuleSet.from_preset("cancellation", players=9).kitty
    5
    """

    #: The preset this rule set started from (kept in records, with the overrides).
    preset: str = "standard"
    #: Number of players, 3-7 (6-11 with cancellation).
    players: int = 4
    #: Cards taken out of the deck so it divides evenly (§2 table by default).
    removed: tuple[str, ...] = ()
    #: Cards dealt face down aside; they score for whoever takes them (see ``kitty_taker``).
    kitty: int = 0
    #: Who takes the kitty: first winner of a trick with points (hearts or QS), the winner of
    #: the first trick, of the last trick, or first winner of a trick with a heart.
    kitty_taker: KittyTaker = "first_points_trick"
    #: Which way play goes round the table. Seats are numbered in play order either way:
    #: clockwise, the player on your left plays next; counterclockwise (seeds 000 and 001,
    #: which play like Hokm), the player on your right does.
    direction: PlayDirection = "clockwise"
    #: Pass direction of hand k is ``pass_cycle[k % len]`` (see ``direction`` for which seat
    #: "left" and "right" name).
    pass_cycle: tuple[Direction, ...] = _STANDARD_CYCLE
    #: Cards each player passes.
    pass_count: int = 3
    #: Points of each heart by rank, 2 .. A.
    heart_points: tuple[int, ...] = _ONE_HEART_EACH
    #: Points of the queen of spades.
    queen_points: int = 13
    #: Added to the score of whoever takes JD (Omnibus: -10); 0 for none.
    jd_bonus: int = 0
    #: Shooting the moon: others get ``moon_points`` (add), the shooter loses them
    #: (subtract), the shooter chooses (choice), or no moon (off).
    moon: MoonRule = "add"
    #: The moon's amount; None means the deck's total points (26 for the standard deck).
    moon_points: int | None = None
    #: No heart and no QS may be played to the first trick...
    no_points_first_trick: bool = True
    #: ...unless a player holds nothing else: then any card (any), or a heart before the QS
    #: (hearts_first).
    first_trick_forced: FirstTrickForced = "any"
    #: What allows hearts to be led: a heart played earlier, a heart or the QS, or always.
    hearts_break: HeartsBreak = "heart_or_queen"
    #: A leader holding only hearts before they are broken leads one (allow), or the deal is
    #: void and dealt again (redeal, seed 001 rule 9).
    only_hearts_lead: OnlyHeartsLead = "allow"
    #: The game ends after the hand in which a total reaches this.
    target: int = 100
    #: Ties for the lowest total: play another hand, the tied player who took the highest
    #: diamond in the last hand wins (else another hand), or they share the win.
    tie_break: TieBreak = "extra_hand"
    #: Hokm: a hakem declares a trump suit before passing.
    hokm: bool = False
    #: Cancellation: two decks; identical cards in a trick cancel each other.
    cancellation: bool = False

    _derived: _Derived = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _validate(self)
        object.__setattr__(self, "_derived", _Derived.build(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (a process pool's) as its settings, rebuilt and checked by __init__: a frozen
        # class compiled by mypyc has no default way back.
        return (RuleSet, tuple(getattr(self, f.name) for f in fields(self) if f.init))

    # --- construction --------------------------------------------------------------------

    @classmethod
    def from_preset(cls, name: str = "standard", **overrides: Any) -> RuleSet:
        """The preset ``name`` with ``overrides``; ``players=N`` applies that count's table.

        >>> RuleSet.from_preset("kitty", players=3).kitty
        1
        """
        try:
            base = PRESETS[name]
        except KeyError:
            raise RulesError(
                f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}"
            ) from None
        unknown = set(overrides) - _SETTING_NAMES
        if unknown:
            known = ", ".join(sorted(_SETTING_NAMES))
            raise RulesError(f"unknown setting {sorted(unknown)[0]!r}; settings: {known}")
        values = dict(base)
        players = overrides.get("players", values.get("players", 4))
        values.update(_player_count_defaults(name, values, players))
        values.update({key: _coerce(key, value) for key, value in overrides.items()})
        try:
            return cls(preset=name, **values)
        except TypeError:
            _explain_type_error({"preset": name, **values})
            raise

    @classmethod
    def from_spec(cls, spec: str | Mapping[str, Any] | RuleSet) -> RuleSet:
        """A rule set from its JSON form: a preset name or ``{"preset": name, setting: value}``.

        >>> RuleSet.from_spec("no_broken").hearts_break
        'no_broken'
        """
        if isinstance(spec, RuleSet):
            return spec
        if isinstance(spec, str):
            return cls.from_preset(spec)
        if isinstance(spec, Mapping):
            settings = dict(spec)
            name = settings.pop("preset", "standard")
            if not isinstance(name, str):
                raise RulesError(f"'preset' must be a preset name, not {name!r}")
            return cls.from_preset(name, **settings)
        raise RulesError(f"rules must be a preset name or an object, not {type(spec).__name__}")

    def to_spec(self) -> str | dict[str, Any]:
        """The shortest JSON form: the preset's name, or it with the settings that differ.

        >>> RuleSet.from_preset("standard", players=3).to_spec()
        {'preset': 'standard', 'players': 3}
        """
        # Worked out once per rule set (every observation a bot is sent carries it); each
        # caller gets its own copy.
        cached = self._derived.spec
        if not cached:
            cached.append(self._compute_spec())
        spec = cached[0]
        if isinstance(spec, str):
            return spec
        return {k: v[:] if isinstance(v, list) else v for k, v in spec.items()}

    def _compute_spec(self) -> str | dict[str, Any]:
        reference = RuleSet.from_preset(self.preset, players=self.players)
        diff: dict[str, Any] = {}
        if self.players != PRESETS[self.preset].get("players", 4):
            diff["players"] = self.players
        for f in fields(self):
            if f.name in ("preset", "players", "_derived"):
                continue
            value = getattr(self, f.name)
            if value != getattr(reference, f.name):
                diff[f.name] = list(value) if isinstance(value, tuple) else value
        return self.preset if not diff else {"preset": self.preset, **diff}

    def to_dict(self) -> dict[str, Any]:
        """Every setting, as JSON-ready values."""
        data = asdict(self)
        data.pop("_derived", None)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    def with_players(self, players: int) -> RuleSet:
        """The same rules at a table of ``players``: every setting chosen for them is kept,
        and what the player count decides (the removed cards or the kitty, and the pass cycle
        unless one was chosen that still fits) comes from that count's table.

        >>> rules = RuleSet.from_spec({"preset": "standard", "target": 50})
        >>> five = rules.with_players(5)
        >>> five.players, five.target, five.removed
        (5, 50, ('2C', '2D'))
        >>> across = RuleSet.from_spec({"preset": "standard", "pass_cycle": ["across"]})
        >>> across.with_players(3).pass_cycle  # nobody sits across at three: the table's
        ('left', 'right')
        """
        if players == self.players:
            return self
        spec = self.to_spec()
        chosen = {} if isinstance(spec, str) else {k: v for k, v in spec.items() if k != "preset"}
        chosen = {k: v for k, v in chosen.items() if k not in ("players", "removed", "kitty")}
        try:
            return RuleSet.from_preset(self.preset, **chosen, players=players)
        except RulesError:
            if "pass_cycle" not in chosen:
                raise
            chosen.pop("pass_cycle")  # one that cannot be played at this count: the table's
            return RuleSet.from_preset(self.preset, **chosen, players=players)

    def with_overrides(self, **overrides: Any) -> RuleSet:
        """A copy with some settings changed (no player-count table applied)."""
        changes = {key: _coerce(key, value) for key, value in overrides.items()}
        try:
            return replace(self, **changes)
        except TypeError:
            _explain_type_error({**self._settings(), **changes})
            raise

    def _settings(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    # --- derived facts --------------------------------------------------------------------

    @property
    def deck_mask(self) -> int:
        """The cards in play as a mask: bit ``i`` set when card index ``i`` (0..103, the
        second deck from 52 on, :data:`engine.cards.CARD_TEXTS`) is dealt.

        >>> bin(RuleSet.from_preset("standard", players=5).deck_mask).count("1")
        50
        """
        return self._derived.deck_mask

    @property
    def deck_size(self) -> int:
        """Cards in play: the deck (two with cancellation) less the removed cards."""
        return self._derived.deck_size

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return self._derived.hand_size

    @property
    def total_points(self) -> int:
        """Points of all hearts and queens of spades in play (before the JD bonus)."""
        return self._derived.total_points

    @property
    def moon_amount(self) -> int:
        """What shooting the moon is worth (``moon_points``, or the deck's total points)."""
        return self.total_points if self.moon_points is None else self.moon_points

    @property
    def can_score(self) -> bool:
        """Whether some hand can raise some seat's total: without it a game to the target
        never ends (it stops at the hand cap, ``engine.state.MAX_HANDS``).

        >>> RuleSet.from_preset("standard").can_score
        True
        >>> RuleSet.from_preset("standard", heart_points=[0] * 13, queen_points=0).can_score
        False
        """
        if any(p > 0 for p in self.heart_points) or self.queen_points > 0 or self.jd_bonus > 0:
            return True
        # the moon: the others get the amount (add), the shooter loses it (subtract: a gain
        # only when it is negative), or the shooter picks either (choice)
        amount = self.moon_amount
        return {"add": amount > 0, "subtract": amount < 0, "choice": amount != 0}.get(
            self.moon, False
        )

    def pass_offset(self, hand_number: int) -> int:
        """How many seats onward in play order hand ``hand_number``'s passes go (0 for a
        hold hand).

        >>> [RuleSet.from_preset("standard").pass_offset(k) for k in range(5)]
        [1, 3, 2, 0, 1]
        >>> [RuleSet.from_preset("persian").pass_offset(k) for k in range(5)]  # right first
        [1, 3, 2, 0, 1]
        """
        return self.side_offset(self.pass_cycle[hand_number % len(self.pass_cycle)])

    def side_offset(self, side: Direction) -> int:
        """How many seats onward in play order the player on ``side`` of a seat sits (0 for
        ``hold``): left is the next player clockwise, right the next counterclockwise.

        >>> RuleSet.from_preset("standard").side_offset("right")
        3
        >>> RuleSet.from_preset("hokm_40").side_offset("right")
        1
        """
        return _offset(side, self.players, self.direction == "counterclockwise")

    def pass_direction(self, hand_number: int) -> Direction:
        """``left``, ``right``, ``across`` or ``hold`` for hand ``hand_number``."""
        return self.pass_cycle[hand_number % len(self.pass_cycle)]


def _offset(direction: str, players: int, counterclockwise: bool) -> int:
    if direction == "left":
        return players - 1 if counterclockwise else 1
    if direction == "right":
        return 1 if counterclockwise else players - 1
    if direction == "across":
        return players // 2
    return 0


@dataclass(frozen=True)
class _Derived:
    """Masks and numbers computed once per rule set, used by the game state."""

    deck_mask: int
    deck_size: int
    hand_size: int
    point_values: tuple[int, ...]  # by card index 0..103
    point_mask: int  # hearts and queens of spades in play: the cards of a moon shot
    heart_mask: int
    queen_mask: int
    jd_mask: int
    total_points: int
    uniform_hearts: int | None  # every heart's points, when they are all the same
    deck: tuple[int, ...]  # card indices in play, in index order
    deck_is_range: bool  # deck == (0, 1, ..., n-1): no removed cards, one deck
    #: The rule set's :meth:`RuleSet.to_spec`, once asked for (a cell: this class is frozen).
    spec: list[str | dict[str, Any]] = field(default_factory=list, compare=False)

    @staticmethod
    def build(rules: RuleSet) -> _Derived:
        decks = 2 if rules.cancellation else 1
        deck_mask = (1 << (DECK_SIZE * decks)) - 1
        for text in rules.removed:
            deck_mask &= ~(1 << card_index(text))
        deck_size = DECK_SIZE * decks - len(rules.removed)
        values = []
        heart_mask = queen_mask = jd_mask = 0
        for index in range(2 * DECK_SIZE):
            suit, rank = CARD_SUIT[index], CARD_RANK[index]
            bit = 1 << index
            in_play = bool(deck_mask & bit)
            if suit == HEARTS:
                values.append(rules.heart_points[rank])
                heart_mask |= bit if in_play else 0
            elif suit == SPADES and rank == 10:
                values.append(rules.queen_points)
                queen_mask |= bit if in_play else 0
            else:
                values.append(0)
                if suit == DIAMONDS and rank == 9 and in_play:
                    jd_mask |= bit
        point_mask = heart_mask | queen_mask
        total = sum(values[i] for i in range(2 * DECK_SIZE) if point_mask >> i & 1)
        return _Derived(
            deck_mask=deck_mask,
            deck_size=deck_size,
            hand_size=(deck_size - rules.kitty) // rules.players,
            point_values=tuple(values),
            point_mask=point_mask,
            heart_mask=heart_mask,
            queen_mask=queen_mask,
            jd_mask=jd_mask,
            total_points=total,
            uniform_hearts=rules.heart_points[0] if len(set(rules.heart_points)) == 1 else None,
            deck=tuple(i for i in range(2 * DECK_SIZE) if deck_mask >> i & 1),
            deck_is_range=deck_mask == (1 << deck_size) - 1,
        )


# Seed 001's rules of play, shared by `persian` and its point games. Seed 000 deals "like
# Hokm", which goes counterclockwise: their "right" is the next player (RULES.md §7).
_SEED_001: Final[Mapping[str, Any]] = {
    "direction": "counterclockwise",
    "pass_cycle": _PERSIAN_CYCLE,
    "hearts_break": "heart",
    "tie_break": "highest_diamond",
    "only_hearts_lead": "redeal",
}
_FORTY: Final[Mapping[str, Any]] = {
    "heart_points": _BLACK_LADY_40_HEARTS,
    "queen_points": 17,
    "moon_points": 26,
    "target": 100,
}

PRESETS: Final[Mapping[str, Mapping[str, Any]]] = {
    # Seed 003: pass left, right, across, hold; a heart or the QS breaks hearts; to 100;
    # a tie for the lowest total plays another hand.
    "standard": {},
    # Seeds 000/001: counterclockwise; pass right (to the next player), left, across, hold;
    # only a heart breaks hearts; seed 001's highest-diamond tie-break and redeal on an
    # only-hearts lead (000 is silent on both).
    "persian": dict(_SEED_001),
    # Seed 001's point games keep its other rules; the moon gives the others 26.
    "black_lady_54": {
        **_SEED_001,
        "heart_points": _BLACK_LADY_54_HEARTS,
        "queen_points": 17,
        "moon_points": 26,
        "target": 500,
    },
    "black_lady_40": {**_SEED_001, **_FORTY},
    "hokm_40": {**_SEED_001, **_FORTY, "hokm": True},
    # Seed 003's variants of the standard game.
    "omnibus": {"jd_bonus": -10},
    "kitty": {"kitty": 4, "removed": ()},
    "no_broken": {"hearts_break": "no_broken"},
    "moon_subtract": {"moon": "subtract"},
    "moon_choice": {"moon": "choice"},
    # Left-over cards go to the first winner of a trick with a heart (seed 003).
    "cancellation": {
        "cancellation": True,
        "players": 8,
        "target": 150,
        "kitty_taker": "first_heart_trick",
    },
}

_SETTING_NAMES: Final = frozenset(f.name for f in fields(RuleSet) if f.init) - {"preset"}
_THREE_PLAYER_CYCLES: Final[Mapping[str, tuple[Direction, ...]]] = {
    # Seed 000 (three players, counterclockwise): right (the next player), left, hold.
    # Seed 003: left, right.
    "persian": ("right", "left", "hold"),
    "black_lady_54": ("right", "left", "hold"),
    "black_lady_40": ("right", "left", "hold"),
    "hokm_40": ("right", "left", "hold"),
}


def _player_count_defaults(name: str, base: Mapping[str, Any], players: Any) -> dict[str, Any]:
    """The removal or kitty table and the pass cycle for ``players`` (§2)."""
    if not isinstance(players, int) or isinstance(players, bool):
        return {}
    if base.get("cancellation"):
        cycle: tuple[Direction, ...] = _STANDARD_CYCLE if players % 2 == 0 else ("left", "right")
        return {"kitty": 2 * DECK_SIZE % players if players else 0, "pass_cycle": cycle}
    if players not in REMOVALS:
        return {}
    values: dict[str, Any] = {}
    if base.get("kitty"):
        values["kitty"] = KITTY_SIZES[players]
    else:
        values["removed"] = REMOVALS[players]
    # Seed 003's table (clockwise) passes left first, to the next player; a counterclockwise
    # preset names that pass right, as its own texts do at 3 and 4 players.
    next_first: tuple[Direction, ...] = (
        ("right", "left") if base.get("direction") == "counterclockwise" else ("left", "right")
    )
    if players == 3:
        values["pass_cycle"] = _THREE_PLAYER_CYCLES.get(name, next_first)
    elif players != 4:
        values["pass_cycle"] = next_first
    return values


def _coerce(name: str, value: Any) -> Any:
    """JSON values to setting types (lists to tuples); type errors are left to validation."""
    if name in ("removed", "pass_cycle", "heart_points") and isinstance(value, list):
        return tuple(value)
    return value


def _explain_type_error(values: Mapping[str, Any]) -> None:
    """Raise the :class:`RulesError` that names the setting of the wrong type, if any.

    Compiled with mypyc, ``RuleSet`` checks each field's type on creation (a ``TypeError``)
    before ``__post_init__`` can say which setting is wrong: the same checks, on the raw
    values, say it.
    """
    defaults = {f.name: f.default for f in fields(RuleSet) if f.init and f.default is not MISSING}
    _validate(SimpleNamespace(**{**defaults, **values}))


# (SimpleNamespace: the raw settings, when they cannot make a RuleSet; see above.)
_Settings = RuleSet | SimpleNamespace


def _literal(rules: _Settings, name: str, kind: Any) -> None:
    value = getattr(rules, name)
    allowed = get_args(kind)
    if value not in allowed:
        raise RulesError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _integer(rules: _Settings, name: str, minimum: int | None = None) -> int:
    value = getattr(rules, name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RulesError(f"{name} must be an integer; got {value!r}")
    if minimum is not None and value < minimum:
        raise RulesError(f"{name} must be at least {minimum}; got {value}")
    return value


def _validate(rules: _Settings) -> None:
    if rules.preset not in PRESETS:
        raise RulesError(f"unknown preset {rules.preset!r}; presets: {', '.join(sorted(PRESETS))}")
    players = _integer(rules, "players")
    if rules.cancellation is not True and rules.cancellation is not False:
        raise RulesError(f"cancellation must be true or false; got {rules.cancellation!r}")
    if rules.cancellation:
        if not 6 <= players <= 11:
            raise RulesError(f"cancellation is played by 6 to 11 players, not {players}")
        if rules.removed:
            raise RulesError("cancellation removes no cards: the left-over cards form the kitty")
    elif not 3 <= players <= 7:
        if players > 7:
            raise RulesError(
                f"{players} players need cancellation (6 to 11 players); without it 3 to 7 play"
            )
        raise RulesError(f"Hearts needs 3 to 7 players, not {players}")
    for name in ("no_points_first_trick", "hokm"):
        if not isinstance(getattr(rules, name), bool):
            raise RulesError(f"{name} must be true or false; got {getattr(rules, name)!r}")

    if not isinstance(rules.removed, tuple):
        raise RulesError(f"removed must be a list of cards; got {rules.removed!r}")
    seen: set[int] = set()
    for text in rules.removed:
        try:
            index = card_index(text)
        except CardError as exc:
            raise RulesError(f"removed: {exc}") from None
        if index in seen:
            raise RulesError(f"removed lists {CARD_TEXTS[index]} twice")
        if text != CARD_TEXTS[index]:
            raise RulesError(f"removed: write {text!r} as {CARD_TEXTS[index]!r}")
        seen.add(index)
    if all(i in seen for i in range(DECK_SIZE) if CARD_SUIT[i] == CLUBS):
        raise RulesError("at least one club must stay in the deck: the lowest club leads")

    kitty = _integer(rules, "kitty", minimum=0)
    deck = DECK_SIZE * (2 if rules.cancellation else 1) - len(rules.removed)
    dealt = deck - kitty
    if dealt <= 0 or dealt % players:
        if rules.cancellation:
            hint = f"the kitty must be {deck % players}"
        else:
            hint = "pass players=N to apply the removal table, or set removed/kitty"
        raise RulesError(
            f"{deck} cards less a kitty of {kitty} do not divide among {players} players; {hint}"
        )
    hand_size = dealt // players
    _literal(rules, "kitty_taker", KittyTaker)
    _literal(rules, "direction", PlayDirection)

    if not isinstance(rules.pass_cycle, tuple) or not rules.pass_cycle:
        raise RulesError("pass_cycle must be a non-empty list of left, right, across, hold")
    for direction in rules.pass_cycle:
        if direction not in get_args(Direction):
            raise RulesError(f"pass_cycle: {direction!r} is not one of left, right, across, hold")
        if direction == "across" and players % 2:
            raise RulesError(f"pass_cycle: nobody sits across with {players} players")
    pass_count = _integer(rules, "pass_count", minimum=0)
    if pass_count >= hand_size:
        raise RulesError(f"pass_count {pass_count} must be less than the {hand_size} cards dealt")

    if (
        not isinstance(rules.heart_points, tuple)
        or len(rules.heart_points) != 13
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in rules.heart_points)
    ):
        raise RulesError("heart_points must list 13 integers, the points of 2H .. AH")
    _integer(rules, "queen_points")
    _integer(rules, "jd_bonus")
    _literal(rules, "moon", MoonRule)
    if rules.moon_points is not None:
        _integer(rules, "moon_points", minimum=0)
    _literal(rules, "first_trick_forced", FirstTrickForced)
    _literal(rules, "hearts_break", HeartsBreak)
    _literal(rules, "only_hearts_lead", OnlyHeartsLead)
    _integer(rules, "target", minimum=1)
    _literal(rules, "tie_break", TieBreak)


def rule_sets() -> dict[str, RuleSet]:
    """Every preset at its default player count.

    >>> sorted(rule_sets())[:3]
    ['black_lady_40', 'black_lady_54', 'cancellation']
    """
    return {name: RuleSet.from_preset(name) for name in PRESETS}


def allowed_player_counts(preset: str) -> range:
    """The player counts a preset can be played with.

    >>> list(allowed_player_counts("cancellation"))
    [6, 7, 8, 9, 10, 11]
    """
    return range(6, 12) if PRESETS[preset].get("cancellation") else range(3, 8)
