"""The search under ``strong`` (:mod:`bots_sdk.builtin.strong`): determinized Monte-Carlo
search on cheap reshuffled deals, a bitmask rollout policy, and what a view rules out of the
hidden hands. Plain functions and classes on the engine's masks, compiled with the engine's hot
modules where the compiled build is installed (``bidel compile``), so a play searches several
times more rollouts in the same time.

- :class:`Deals` deals the cards a view cannot see into copies of one consistent state, within
  what the view rules out: voids, a heart led before hearts were broken, points discarded to
  the first trick, the cards this seat passed (the receiver holds them until he plays them),
  the clubs below the first lead (they are in the kitty); and, as a strong lean rather than a
  rule, that a seat which discarded something else while the queen of spades was out does not
  hold her.
- :class:`Rollout` finishes a hand, every seat alike: lead the card least likely to win, duck
  as high as possible, take a trick lost anyway with the highest card, shed the queen and then
  high spades and hearts when void, and deny a lone shooter the moon; a seat may be told to
  shoot the moon instead.
- :func:`choices` merges cards that no unseen card separates; :func:`search` plays every choice
  out on every sample (common random numbers), halving the choices as the budget goes.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from typing import Final

from bots_sdk.view import View
from engine.cards import CARD_RANK, CARD_SUIT, CARD_TEXTS, CLUBS, DECK_SIZE, HEARTS, SPADES
from engine.rules import RuleSet
from engine.state import GameState, Phase

_CARDS: Final = 2 * DECK_SIZE  # card indices of both decks (Cancellation's second from 52)
_QUEEN: Final = CARD_TEXTS.index("QS")
_JACK_OF_DIAMONDS: Final = CARD_TEXTS.index("JD")
_PLAY: Final = Phase.PLAY


def _cards_where(test: list[bool]) -> int:
    mask = 0
    for index, chosen in enumerate(test):
        if chosen:
            mask |= 1 << index
    return mask


#: Per suit, every card of it; per rank (0 for a two .. 12 for an ace), every card of it.
_SUIT_CARDS: Final = tuple(
    _cards_where([CARD_SUIT[i] == s for i in range(_CARDS)]) for s in range(4)
)
_RANK_CARDS: Final = tuple(
    _cards_where([CARD_RANK[i] == r for i in range(_CARDS)]) for r in range(13)
)
#: Per card: the cards of its suit ranked below it, and above it.
_LOWER: Final = tuple(
    _cards_where(
        [CARD_SUIT[j] == CARD_SUIT[i] and CARD_RANK[j] < CARD_RANK[i] for j in range(_CARDS)]
    )
    for i in range(_CARDS)
)
_HIGHER: Final = tuple(
    _cards_where(
        [CARD_SUIT[j] == CARD_SUIT[i] and CARD_RANK[j] > CARD_RANK[i] for j in range(_CARDS)]
    )
    for i in range(_CARDS)
)
#: Per suit and rank 0..13: the suit's cards ranked below that rank (13: the whole suit).
_BELOW: Final = tuple(
    tuple(
        _cards_where([CARD_SUIT[i] == s and CARD_RANK[i] < r for i in range(_CARDS)])
        for r in range(14)
    )
    for s in range(4)
)
_QUEENS: Final = 1 << _QUEEN | 1 << (_QUEEN + DECK_SIZE)
_HIGH_SPADES: Final = _SUIT_CARDS[SPADES] & (_RANK_CARDS[11] | _RANK_CARDS[12])
_HEART_CARDS: Final = _SUIT_CARDS[HEARTS]
_POINT_CARDS: Final = _HEART_CARDS | _QUEENS


# The index order is the texts' (2..9, then A J K Q T of each suit, four apart): the ranks two
# to nine of every suit are the low 32 bits, in rank order; the picture cards and tens above.
_LOW_RANKS: Final = (1 << 32) - 1
_TOP_DOWN: Final = tuple(_RANK_CARDS[r] & ((1 << DECK_SIZE) - 1) for r in (12, 11, 10, 9, 8))
_TOP_UP: Final = _TOP_DOWN[::-1]


def _highest(mask: int) -> int:
    """The index of a highest-ranked card of ``mask`` (not empty)."""
    if mask >> DECK_SIZE:
        return _highest_slowly(mask)
    for cards in _TOP_DOWN:
        cards &= mask
        if cards:
            return (cards & -cards).bit_length() - 1
    return mask.bit_length() - 1


def _lowest(mask: int) -> int:
    """The index of a lowest-ranked card of ``mask`` (not empty)."""
    if mask >> DECK_SIZE:
        return _lowest_slowly(mask)
    low = mask & _LOW_RANKS
    if low:
        return (low & -low).bit_length() - 1
    for cards in _TOP_UP:
        cards &= mask
        if cards:
            return (cards & -cards).bit_length() - 1
    raise ValueError("no card in an empty mask")


def _highest_slowly(mask: int) -> int:
    for rank in range(12, -1, -1):
        cards = mask & _RANK_CARDS[rank]
        if cards:
            return (cards & -cards).bit_length() - 1
    raise ValueError("no card in an empty mask")


def _lowest_slowly(mask: int) -> int:
    for rank in range(13):
        cards = mask & _RANK_CARDS[rank]
        if cards:
            return (cards & -cards).bit_length() - 1
    raise ValueError("no card in an empty mask")


def _random_card(mask: int, rng: random.Random) -> int:
    k = rng.randrange(mask.bit_count())
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


def _value(cards: int, values: list[int]) -> int:
    total = 0
    while cards:
        low = cards & -cards
        total += values[low.bit_length() - 1]
        cards ^= low
    return total


def card_value(rules: RuleSet, index: int) -> int:
    """What taking the card with this index adds to a score, the moon aside.

    >>> rules = RuleSet.from_preset("omnibus")
    >>> [card_value(rules, CARD_TEXTS.index(text)) for text in ("QS", "AH", "JD", "AS")]
    [13, 1, -10, 0]
    """
    if CARD_SUIT[index] == HEARTS:
        return rules.heart_points[CARD_RANK[index]]
    if index % DECK_SIZE == _QUEEN:
        return rules.queen_points
    if index % DECK_SIZE == _JACK_OF_DIAMONDS:
        return rules.jd_bonus
    return 0


class Rollout:
    """The rollout policy: finishes a hand from any state in play, every seat alike.

    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=4)
    >>> scores = Rollout(state.rules).finish(state, random.Random(1))
    >>> state.phase.value, sum(scores)
    ('hand_over', 26)
    """

    def __init__(self, rules: RuleSet, epsilon: float = 0.05) -> None:
        self.epsilon = epsilon
        self.players = rules.players
        self.deck = rules.deck_mask
        self.point_cards = _POINT_CARDS & rules.deck_mask
        # Worth stopping a lone taker from going on (the heuristic's 8 of the standard 26).
        self.threat = max(1, rules.total_points * 8 // 26) if rules.moon != "off" else 0
        self.values = [card_value(rules, i) for i in range(_CARDS)]
        # Hearts worth more than the least of them (the black-lady games' J, Q, K and A of
        # hearts): a trick that must be won is not won with one of these when a cheaper card
        # wins it as well. None where every heart is worth the same.
        cheapest = min(rules.heart_points)
        self.costly = 0
        for index in range(_CARDS):
            if CARD_SUIT[index] == HEARTS and self.values[index] > cheapest:
                self.costly |= 1 << index
        self.costly &= self.deck

    def finish(self, state: GameState, rng: random.Random, shooter: int = -1) -> list[int]:
        """Play ``state`` to the end of its hand; what the hand adds to each total. The seat
        ``shooter`` (if any) tries to take every trick, until another seat takes a point."""
        point_cards = self.point_cards
        values = self.values
        gone = 0  # the cards played, in this rollout or before
        for raw in state.trick_log:
            for card in raw[1]:
                gone |= 1 << card
        trick = 0  # the cards of the trick in play
        for card in state.trick_cards:
            trick |= 1 << card
        gone |= trick
        # Who holds every point taken so far (-1: nobody has any; -2: more than one seat).
        owner, owned = -1, 0
        for seat, taken in enumerate(state.taken):
            points = taken & point_cards
            if points:
                owner = seat if owner == -1 else -2
                owned += _value(points, values)
        players = self.players
        epsilon = self.epsilon
        threat = self.threat
        trump = -1 if state.trump is None else state.trump
        legal_mask = state.legal_mask
        apply_index = state.apply_index
        draw = rng.random
        while state.phase is _PLAY:
            legal = legal_mask()
            if not legal & (legal - 1):
                index = legal.bit_length() - 1
            elif shooter >= 0 and state.current == shooter:
                if owner == -2 or owner not in (-1, shooter):
                    shooter = -1  # someone else has a point: back to ducking
                    continue
                index = self._shoot(state, legal, trick, gone)
            elif draw() < epsilon:
                index = _random_card(legal, rng)
            elif not trick:
                index = self._lead(legal, state.hands[state.current], gone)
            else:
                led = state.led_suit
                follow = legal & _SUIT_CARDS[led]
                taker = owner if owner >= 0 and threat and owned >= threat else -1
                if follow:
                    index = self._follow(
                        state,
                        follow,
                        led,
                        trump,
                        trick,
                        len(state.trick_cards) == players - 1,
                        0 <= taker != state.current,
                    )
                else:
                    index = self._discard(state, legal, led, trump, gone, taker)
            apply_index(index)
            bit = 1 << index
            gone |= bit
            trick |= bit
            if not state.trick_cards:  # the trick is over: its winner leads the next
                points = trick & point_cards
                if points and owner != -2:
                    winner = state.leader
                    owner = winner if owner in (-1, winner) else -2
                    owned += _value(points, values)
                trick = 0
        if state.phase is Phase.MOON_CHOICE:
            state.apply("add")  # (either choice leaves the same margins between the seats)
        return list(state.history[-1].scores)

    def _shoot(self, state: GameState, legal: int, trick: int, gone: int) -> int:
        """Shooting the moon: lead a sure winner, win what can be won, shed low cards."""
        hand = state.hands[state.current]
        others = self.deck & ~(gone | hand)
        if not trick:
            best, best_score = -1, 99
            for suit in range(4):
                cards = legal & _SUIT_CARDS[suit]
                if not cards:
                    continue
                card = _highest(cards)
                score = 2 * (others & _HIGHER[card]).bit_count() - cards.bit_count()
                if score < best_score:
                    best, best_score = card, score
            return best
        follow = legal & _SUIT_CARDS[state.led_suit]
        if follow:
            top = _highest(follow)
            trumps = state.trump is not None and state.led_suit == state.trump
            beats = CARD_RANK[top] + (20 if trumps else 0) > state.win_key
            return top if beats else _lowest(follow)
        clean = legal & ~self.point_cards
        return _lowest(clean or legal)

    def _lead(self, legal: int, hand: int, gone: int) -> int:
        others = self.deck & ~(gone | hand)
        safe = legal & ~self.point_cards or legal
        queen_out = _QUEENS & others
        if queen_out:
            safe = safe & ~_HIGH_SPADES or safe
        flush = queen_out and not hand & _HIGH_SPADES
        best, best_score = -1, 99
        for suit in range(4):
            cards = safe & _SUIT_CARDS[suit]
            if not cards:
                continue
            card = _lowest(cards)
            under = (others & _LOWER[card]).bit_count()
            over = (others & _HIGHER[card]).bit_count()
            score = under if over else 20 + under  # a sure winner leads last
            if flush and suit == SPADES and CARD_RANK[card] < 10:
                score -= 2  # low spades draw the queen out of others' hands
            if score < best_score:
                best, best_score = card, score
        return best

    def _follow(
        self,
        state: GameState,
        follow: int,
        led: int,
        trump: int,
        trick: int,
        last: bool,
        threatened: bool,
    ) -> int:
        key = state.win_key
        if led == trump:
            below = follow & _BELOW[led][key - 20]
        elif key >= 20:  # trumped: following cannot win
            below = follow
        else:
            below = follow & _BELOW[led][key]
        above = follow & ~below
        if threatened and above and trick & self.point_cards:
            return _lowest(above)  # take a point to stop the shooter
        if below:
            queen = below & _QUEENS
            if queen:
                return (queen & -queen).bit_length() - 1
            return _highest(below)
        safe = above & ~_QUEENS or above
        if not last:
            return _lowest(safe)
        return _highest(safe & ~self.costly or safe)  # (the trick is ours: shed, cheaply)

    def _discard(
        self, state: GameState, legal: int, led: int, trump: int, gone: int, shooter: int
    ) -> int:
        pool = legal
        if trump >= 0 and led != trump:
            pool = legal & ~_SUIT_CARDS[trump] or legal
        if shooter >= 0 and state.win_seat == shooter != state.current:
            # The shooter wins the trick so far: give him nothing that counts.
            clean = pool & ~self.point_cards
            if clean:
                return _highest(clean)
        queen = pool & _QUEENS
        if queen:
            return (queen & -queen).bit_length() - 1
        if _QUEENS & ~gone & ~state.hands[state.current] and pool & _HIGH_SPADES:
            return _highest(pool & _HIGH_SPADES)
        hearts = pool & _HEART_CARDS
        if hearts:
            return _highest(hearts)
        return _highest(pool)


class Deals:
    """Deals of the cards ``view`` cannot see into copies of ``template``, a state consistent
    with the view (one :class:`bots_sdk.sampling.Simulation` sample), within what the view
    rules out.

    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=4)
    >>> state.apply("2C")
    >>> view = View.from_observation(state.observation(state.current_seat))
    >>> from bots_sdk.sampling import Simulation
    >>> deals = Deals(view, Simulation(view, random.Random(1)).sample())
    >>> guess = deals.deal(random.Random(2))
    >>> guess.hand_of(view.seat) == view.hand, sorted(len(guess.hand_of(s)) for s in range(4))
    (True, [12, 13, 13, 13])
    """

    def __init__(self, view: View, template: GameState, lean: float = 0.85) -> None:
        rules = view.rules
        n = rules.players
        me = view.seat
        self.template = template
        self.lean = lean
        self.players = n
        allowed, only_points, no_queen = _inferences(view)

        # The cards whose holder is known: what this seat passed, in the receiver's hand.
        known = [0] * n
        played_by: list[Counter[str]] = [Counter() for _ in range(n)]
        for trick in view.tricks:
            for seat, text in trick.plays:
                played_by[seat][text] += 1
        for seat, text in view.trick:
            played_by[seat][text] += 1
        if view.passed and view.pass_offset:
            receiver = (me + view.pass_offset) % n
            held = template.hands[receiver]
            for text in (Counter(view.passed) - played_by[receiver]).elements():
                first = CARD_TEXTS.index(text)
                for index in (first, first + DECK_SIZE):
                    if held >> index & 1 and not known[receiver] >> index & 1:
                        known[receiver] |= 1 << index
                        break
        self.known = known

        # The slots to fill: every other seat (by its room), then the kitty (seat n).
        kitty = template.kitty
        capacity = [0] * (n + 1)
        unseen = kitty
        for seat in range(n):
            if seat != me:
                free = template.hands[seat] & ~known[seat]
                capacity[seat] = free.bit_count()
                unseen |= free
        capacity[n] = kitty.bit_count()
        self.capacity = capacity
        self.slots = [s for s in range(n + 1) if capacity[s]]

        # Under the kitty rules the lowest club dealt leads: lower clubs unseen were set aside.
        first_lead = _first_lead(view)
        below_lead = 0
        if kitty and first_lead >= 0 and not rules.cancellation:
            below_lead = _LOWER[first_lead] & _SUIT_CARDS[CLUBS]

        everywhere = tuple(self.slots)
        constrained: dict[int, tuple[int, ...]] = {}
        free_cards: list[int] = []
        leaned: dict[int, tuple[int, ...]] = {}
        mask = unseen
        while mask:
            low = mask & -mask
            mask ^= low
            card = low.bit_length() - 1
            suit = CARD_SUIT[card]
            point = bool(low & _POINT_CARDS)
            if low & below_lead:
                options: tuple[int, ...] = (n,)
            else:
                options = tuple(
                    s
                    for s in everywhere
                    if s == n or (suit in allowed[s] and (point or not only_points[s]))
                )
            if low & _QUEENS and any(no_queen):
                lean_options = tuple(s for s in options if s == n or not no_queen[s])
                if lean_options and lean_options != options:
                    leaned[card] = lean_options
            if options == everywhere and card not in leaned:
                free_cards.append(card)
            else:
                constrained[card] = options
        self.constrained = constrained
        self.free_cards = free_cards
        self.leaned = leaned

    def deal(self, rng: random.Random) -> GameState:
        """A copy of the template with the unseen cards dealt again (the template itself when
        twenty tries find no room for a card that has few places to go)."""
        template = self.template
        for _ in range(20):
            hands = self._assign(rng)
            if hands is not None:
                break
        else:
            return template.clone()
        state = template.clone()
        n = self.players
        for seat in self.slots:
            if seat < n:
                state.hands[seat] = hands[seat] | self.known[seat]
        if self.capacity[n]:
            taker = state.kitty_taker
            if taker is not None:
                state.taken[taker] = state.taken[taker] & ~template.kitty | hands[n]
            state.kitty = hands[n]
        return state

    def _assign(self, rng: random.Random) -> list[int] | None:
        room = self.capacity[:]
        hands = [0] * (self.players + 1)
        order = list(self.constrained.items())
        if self.leaned and rng.random() < self.lean:
            for card, options in self.leaned.items():
                order.remove((card, self.constrained[card]))
                order.append((card, options))
        rng.shuffle(order)
        order.sort(key=lambda item: len(item[1]))  # the fewest places first
        for card, options in order:
            total = 0
            for seat in options:
                total += room[seat]
            if not total:
                return None
            pick = rng.randrange(total)
            for seat in options:
                if pick < room[seat]:
                    hands[seat] |= 1 << card
                    room[seat] -= 1
                    break
                pick -= room[seat]
        cards = self.free_cards[:]
        rng.shuffle(cards)
        start = 0
        for seat in self.slots:
            end = start + room[seat]
            for card in cards[start:end]:
                hands[seat] |= 1 << card
            start = end
        return hands


def _first_lead(view: View) -> int:
    """The index of the hand's first card played, or -1."""
    if view.tricks:
        return CARD_TEXTS.index(view.tricks[0].plays[0][1])
    if view.trick:
        return CARD_TEXTS.index(view.trick[0][1])
    return -1


def _inferences(view: View) -> tuple[list[set[int]], list[bool], list[bool]]:
    """Per seat, from the plays: the suits it may still hold, whether it holds nothing but
    points (it played one to the first trick), and whether it most likely lacks the queen of
    spades (it discarded something else while she was out)."""
    rules = view.rules
    n = rules.players
    allowed = [{0, 1, 2, 3} for _ in range(n)]
    only_points = [False] * n
    no_queen = [False] * n
    broken = rules.hearts_break == "no_broken"
    breakers = {"H"} if rules.hearts_break == "heart" else {"H", "QS"}
    trump = view.trump
    queen_gone = "QS" in view.hand
    tricks = [list(t.plays) for t in view.tricks]
    if view.trick:
        tricks.append(list(view.trick))
    for number, trick in enumerate(tricks):
        leader, lead = trick[0]
        led = lead[1]
        if led == "H" and not broken and number > 0:
            allowed[leader] &= {HEARTS}  # led a heart unbroken: held nothing else
        queen_gone = queen_gone or lead == "QS"
        for seat, card in trick[1:]:
            if card[1] != led:
                allowed[seat].discard("CDHS".index(led))
                point = card[1] == "H" or card == "QS"
                if number == 0 and rules.no_points_first_trick and point:
                    only_points[seat] = True
                if (
                    not queen_gone
                    and card != "QS"
                    and card[1] != trump
                    and trump != "S"
                    and (number > 0 or not rules.no_points_first_trick)
                ):
                    no_queen[seat] = True
            queen_gone = queen_gone or card == "QS"
        for _, card in trick:
            if card[1] in breakers or card in breakers:
                broken = True
    if rules.cancellation:  # (two queens: who discarded what while one was out says little)
        no_queen = [False] * n
    return allowed, only_points, no_queen


def choices(view: View) -> list[str]:
    """The legal cards that differ: of cards of a suit with no unseen card between them (and
    worth the same), the lowest stands for all.

    >>> from engine.rules import RuleSet
    >>> hands = [
    ...     ["2C", "3C", "4C", "5C", "6C", "QC", "KC", "AC", "2D", "3D", "4D", "5D", "6D"],
    ...     ["7C", "8C", "9C", "JC", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD", "2H"],
    ...     ["TC"] + [rank + "H" for rank in "3456789TJQKA"],
    ...     [rank + "S" for rank in "23456789TJQKA"],
    ... ]
    >>> rules = RuleSet.from_preset("standard", pass_cycle=["hold"])
    >>> state = GameState.at_play(rules, hands, plays=["2C"])
    >>> view = View.from_observation(state.observation(1))
    >>> view.legal, choices(view)  # (TC, unseen, parts 9C from JC)
    (['7C', '8C', '9C', 'JC'], ['7C', 'JC'])
    """
    legal = view.legal
    rules = view.rules
    if rules.cancellation or len(legal) < 2:
        return list(legal)
    seen = 0
    for text in view.hand:
        seen |= 1 << CARD_TEXTS.index(text)
    for trick in view.tricks:
        for _, text in trick.plays:
            seen |= 1 << CARD_TEXTS.index(text)
    for _, text in view.trick:
        seen |= 1 << CARD_TEXTS.index(text)
    unseen = rules.deck_mask & ~seen
    ordered = sorted(
        (CARD_TEXTS.index(text) for text in legal), key=lambda i: (CARD_SUIT[i], CARD_RANK[i])
    )
    kept = [ordered[0]]
    for card in ordered[1:]:
        previous = kept[-1]
        same = (
            CARD_SUIT[card] == CARD_SUIT[previous]
            and not unseen & _HIGHER[previous] & _LOWER[card]
            and card_value(rules, card) == card_value(rules, previous)
        )
        if not same:
            kept.append(card)
    return sorted(CARD_TEXTS[i] for i in kept)


def _combine(totals: list[float], moon_totals: list[float], moon: bool) -> list[float]:
    """Per choice, the better of ducking and (when weighed) shooting the moon."""
    if not moon:
        return totals
    return [min(a, b) for a, b in zip(totals, moon_totals, strict=True)]


def moon_in_reach(view: View, share: float = 0.5) -> bool:
    """Whether to weigh shooting the moon: no other seat has a point, and this seat has
    points already or a hand of high cards (aces, kings, queens: ``share`` of it at least)."""
    rules = view.rules
    if rules.moon == "off" or not rules.total_points:
        return False
    taken = view.points_taken
    if any(points for seat, points in enumerate(taken) if seat != view.seat):
        return False
    if taken[view.seat]:
        return True
    high = sum(1 for card in view.hand if card[0] in "AKQ")
    return high >= share * len(view.hand)


def search(
    view: View,
    options: list[str],
    deals: Deals,
    rollout: Rollout,
    rng: random.Random,
    limit: int,
    deadline: float | None,
    moon: bool,
) -> tuple[int, int, list[float]]:
    """The index in ``options`` of the choice to play, the rollouts searched, and each
    choice's mean value (this seat's points minus the others' mean, per rollout: lower is
    better; ``nan`` for a choice dropped before any rollout). Each sample is a fresh deal
    from ``deals``; every choice still in the running is played out on it (and, with
    ``moon``, once more with this seat shooting, the better plan counting); successive halving
    keeps the better half once two fifths of what is left is spent. At least one sample is
    searched; then no more than ``limit`` rollouts, and none after ``deadline``
    (``time.perf_counter()``)."""
    seat = view.seat
    others = view.rules.players - 1
    count = len(options)
    totals = [0.0] * count
    moon_totals = [0.0] * count
    samples = [0] * count
    active = list(range(count))
    halve_at = limit * 2 // 5
    per = 2 if moon else 1
    done = 0
    while done == 0 or done + len(active) * per <= limit:
        if done and deadline is not None and time.perf_counter() > deadline:
            break
        if len(active) > 2 and done >= halve_at:
            # Successive halving: the better half of the choices gets the rest.
            value = _combine(totals, moon_totals, moon)
            active = sorted(active, key=lambda number: value[number])[: (len(active) + 1) // 2]
            halve_at = done + (limit - done) * 2 // 5
        base = deals.deal(rng)
        seed = rng.getrandbits(32)
        for number in active:
            state = base.clone()
            state.apply(options[number])
            if moon:
                shot = state.clone()
                scores = rollout.finish(shot, random.Random(seed), shooter=seat)
                moon_totals[number] += scores[seat] - (sum(scores) - scores[seat]) / others
            scores = rollout.finish(state, random.Random(seed))
            totals[number] += scores[seat] - (sum(scores) - scores[seat]) / others
            samples[number] += 1
        done += len(active) * per
    value = _combine(totals, moon_totals, moon)
    best = min(active, key=lambda number: value[number])
    means = [value[n] / samples[n] if samples[n] else float("nan") for n in range(count)]
    return best, done, means


# --- passing ----------------------------------------------------------------------------------


def quick_pass(rules: RuleSet, hand: int, count: int) -> list[int]:
    """The ``count`` cards of ``hand`` (a mask) the heuristic would pass, on masks: the queen
    of spades unless well guarded, the ace and king of spades when they would catch her, high
    hearts, high cards of short suits. What the other seats pass in a pass search's samples.

    >>> from engine.cards import mask_of
    >>> rules = RuleSet.from_preset("standard")
    >>> hand = mask_of(["QS", "3S", "AH", "2C", "3C", "4C", "5C", "6C", "7C", "8C",
    ...                       "2D", "3D", "4D"])
    >>> sorted(CARD_TEXTS[i] for i in quick_pass(rules, hand, 3))
    ['4D', 'AH', 'QS']
    """
    spades = hand & _SUIT_CARDS[SPADES]
    guards = (spades & ~_HIGH_SPADES & ~_QUEENS).bit_count()
    has_queen = bool(hand & _QUEENS)
    lengths = [(hand & _SUIT_CARDS[suit]).bit_count() for suit in range(4)]
    scored: list[tuple[int, int]] = []
    cards = hand
    while cards:
        low = cards & -cards
        cards ^= low
        index = low.bit_length() - 1
        rank, suit = CARD_RANK[index], CARD_SUIT[index]
        if low & _QUEENS:
            danger = 100 if guards < 4 else 5
        elif suit == SPADES and rank > 10:
            danger = 80 if not has_queen or guards < 4 else 4
        else:
            danger = rank
            if suit == HEARTS:
                danger += 8 + (10 if rank >= 9 else 0)
            elif suit != SPADES and lengths[suit] <= 3:
                danger += 12 - 2 * lengths[suit]
            if index % DECK_SIZE == _JACK_OF_DIAMONDS and rules.jd_bonus < 0:
                danger -= 40
        scored.append((danger, index))
    scored.sort(reverse=True)
    return [index for _, index in scored[:count]]


def pass_template(view: View, rng: random.Random) -> GameState | None:
    """A state at this seat's pass, consistent with ``view``: its hand, the others' dealt at
    random from the rest (:func:`search_passes` deals them again for every sample), the seats
    before it passed by :func:`quick_pass`; on the hand's rules with this hand's pass
    direction. None where a pass search does not apply: a kitty or a second deck (whose samples
    would need the kitty's and the twin cards' constraints).

    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_preset("standard"), seed=3)
    >>> view = View.from_observation(state.observation(0))
    >>> template = pass_template(view, random.Random(1))
    >>> template.phase.value, template.current, template.hand_of(0) == view.hand
    ('pass', 0, True)
    """
    rules = view.rules
    if rules.cancellation or view.decision != "pass":
        return None
    direction = rules.pass_direction(view.hand_number)
    here = (
        rules if rules.pass_cycle == (direction,) else rules.with_overrides(pass_cycle=[direction])
    )
    mine = 0
    for text in view.hand:
        mine |= 1 << CARD_TEXTS.index(text)
    rest = [i for i in range(_CARDS) if rules.deck_mask >> i & 1 and not mine >> i & 1]
    rng.shuffle(rest)
    size = len(view.hand)
    if len(rest) != size * (rules.players - 1):
        return None  # (a kitty: cards nobody holds)
    hands: list[list[str]] = []
    start = 0
    for seat in range(rules.players):
        if seat == view.seat:
            hands.append(list(view.hand))
        else:
            hands.append([CARD_TEXTS[i] for i in rest[start : start + size]])
            start += size
    state = GameState(here, None, deal=hands)
    while state.phase is Phase.PASS and state.current != view.seat:
        for index in quick_pass(here, state.hands[state.current], rules.pass_count):
            state.apply_index(index)
    if state.phase is not Phase.PASS or state.kitty:
        return None
    return state


def search_passes(
    view: View,
    candidates: list[list[str]],
    template: GameState,
    rollout: Rollout,
    rng: random.Random,
    limit: int,
    deadline: float | None,
) -> tuple[int, int, list[float]]:
    """The index in ``candidates`` (each a set of cards this seat could pass) to pass, the
    rollouts searched, and each candidate's mean value (as :func:`search`'s). Each sample
    deals the cards this seat cannot see to the other seats of ``template`` (a state at this
    seat's pass, :func:`can_search_passes`), the other seats pass by :func:`quick_pass`, and
    every candidate still in the running is played out to the end of the hand on it (common
    random numbers), with successive halving as :func:`search` does."""
    choices_idx = [[CARD_TEXTS.index(text) for text in cards] for cards in candidates]
    totals = [0.0] * len(candidates)
    samples = [0] * len(candidates)
    active = list(range(len(candidates)))
    halve_at = limit * 2 // 5
    done = 0
    while done == 0 or done + len(active) <= limit:
        if done and deadline is not None and time.perf_counter() > deadline:
            break
        if len(active) > 2 and done >= halve_at:
            means = [totals[k] / samples[k] if samples[k] else 0.0 for k in range(len(totals))]
            active = sorted(active, key=lambda k: means[k])[: (len(active) + 1) // 2]
            halve_at = done + (limit - done) * 2 // 5
        base = _pass_deal(view, template, rng)
        seed = rng.getrandbits(32)
        for number in active:
            totals[number] += _pass_value(view, base, choices_idx[number], rollout, seed)
            samples[number] += 1
        done += len(active)
    means = [totals[k] / samples[k] if samples[k] else float("nan") for k in range(len(totals))]
    best = min(active, key=lambda k: totals[k] / samples[k])
    return best, done, means


def evaluate_passes(
    view: View,
    candidates: list[list[str]],
    template: GameState,
    rollout: Rollout,
    rng: random.Random,
    samples: int,
) -> list[list[float]]:
    """Every candidate pass played out on the same ``samples`` deals, as :func:`search_passes`
    plays them but with no halving (for an analysis): per candidate, each sample's value in
    order, so sample ``k`` of two candidates is a paired comparison."""
    choices_idx = [[CARD_TEXTS.index(text) for text in cards] for cards in candidates]
    values: list[list[float]] = [[] for _ in candidates]
    for _ in range(samples):
        base = _pass_deal(view, template, rng)
        seed = rng.getrandbits(32)
        for number, chosen in enumerate(choices_idx):
            values[number].append(_pass_value(view, base, chosen, rollout, seed))
    return values


def _pass_deal(view: View, template: GameState, rng: random.Random) -> GameState:
    """One sample at this seat's pass: the cards it cannot see dealt again to the other seats
    of ``template``, those before it passing by :func:`quick_pass` from their new hands."""
    rules = view.rules
    seat = view.seat
    count = rules.pass_count
    unseen_all = rules.deck_mask & ~template.hands[seat]
    base = template.clone()
    cards = [i for i in range(_CARDS) if unseen_all >> i & 1]
    rng.shuffle(cards)
    start = 0
    for other in range(rules.players):
        if other == seat:
            continue
        size = template.hands[other].bit_count()
        hand = 0
        for index in cards[start : start + size]:
            hand |= 1 << index
        start += size
        base.hands[other] = hand
        if other < seat:  # passed before this seat: choose again from the new hand
            picks = quick_pass(rules, hand, count)
            picked = 0
            for index in picks:
                picked |= 1 << index
            base.pass_masks[other] = picked
            base.pass_lists[other] = picks
    return base


def _pass_value(
    view: View, base: GameState, chosen: list[int], rollout: Rollout, seed: int
) -> float:
    """This seat passing ``chosen`` (card indexes) from ``base``, the seats after it passing by
    :func:`quick_pass`, the hand played out: its points minus the others' mean."""
    rules = view.rules
    seat = view.seat
    n = rules.players
    state = base.clone()
    for index in chosen:
        state.apply_index(index)
    while state.phase is Phase.PASS:
        for index in quick_pass(rules, state.hands[state.current], rules.pass_count):
            state.apply_index(index)
    if state.phase is not _PLAY:
        raise ValueError(f"after passing the hand is in {state.phase.value}, not play")
    scores = rollout.finish(state, random.Random(seed))
    return scores[seat] - (sum(scores) - scores[seat]) / (n - 1)


def evaluate(
    view: View,
    options: list[str],
    deals: Deals,
    rollout: Rollout,
    rng: random.Random,
    samples: int,
    moon: bool,
) -> list[list[float]]:
    """Every choice of ``options`` played out on the same ``samples`` deals (no halving: each
    is valued alike, for an analysis): per choice, the value of each sample, in order (this
    seat's points minus the others' mean), so sample ``k`` of two choices is a paired
    comparison. With ``moon``, each choice is also played out shooting the moon, and the plan
    with the better mean is its values (as :func:`search` weighs them)."""
    seat = view.seat
    others = view.rules.players - 1
    ducked: list[list[float]] = [[] for _ in options]
    shot: list[list[float]] = [[] for _ in options]
    for _ in range(samples):
        base = deals.deal(rng)
        seed = rng.getrandbits(32)
        for number, option in enumerate(options):
            state = base.clone()
            state.apply(option)
            if moon:
                shooting = state.clone()
                scores = rollout.finish(shooting, random.Random(seed), shooter=seat)
                shot[number].append(scores[seat] - (sum(scores) - scores[seat]) / others)
            scores = rollout.finish(state, random.Random(seed))
            ducked[number].append(scores[seat] - (sum(scores) - scores[seat]) / others)
    if not moon:
        return ducked
    return [b if math.fsum(b) < math.fsum(a) else a for a, b in zip(ducked, shot, strict=True)]
