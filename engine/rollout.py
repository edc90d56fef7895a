"""The rollout fast path: finishing a hand with uniformly random legal moves, the inner loop
of Monte-Carlo bots (:meth:`engine.state.GameState.play_random`).

The rules are the game state's own; only the bookkeeping differs: whole tricks are played
with the state in local variables, written back before anything else looks at it.
``tests/engine/test_rollout.py``, beside it, checks that every rollout replays move for move
through the ordinary step path, for every preset and table size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from engine.cards import (
    _INDEX_OF_BIT,
    CARD_RANK,
    CARD_SUIT,
    FULL_DECK,
    SUIT_MASKS_ONE_DECK,
    _bit_count,
)
from engine.state import GameState, Phase, RawTrick

_PLAY: Final = Phase.PLAY


def play_out(state: GameState, choose: Callable[[int], int]) -> None:
    """Random cards until the hand ends (the rollout hot path), drawn with ``choose(32)``.

    >>> import random
    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_preset("standard"), seed=2)
    >>> pass_out(state, random.Random(1).getrandbits)
    >>> play_out(state, random.Random(1).getrandbits)
    >>> state.phase.value, state.tricks_done
    ('hand_over', 13)

    The rules are those of :meth:`GameState._legal_play_mask`, ``_play`` and
    ``_finish_trick``; only the bookkeeping differs: whole tricks are played with the
    state in local variables, written back before anything else looks at it. Cancellation
    (whose tricks resolve differently) goes card by card through the ordinary path.
    ``tests/engine/test_rollout.py`` checks both paths agree.
    """
    if state._cancel:
        while state.phase is _PLAY:
            state._play(_pick(state._legal_play_mask(), choose))
        return
    # One name per line, types spelled out: compiled (mypyc), a local unpacked from a tuple
    # or of an inferred type may be a generic object, and its arithmetic slow.
    rules = state.rules
    hands: list[int] = state.hands
    taken: list[int] = state.taken
    log: list[RawTrick] = state.trick_log
    n: int = state.n
    last: int = state._hand_size
    trump: int = -1 if state.trump is None else state.trump
    breaks_mask: int = state._breaks_mask
    heart_mask: int = state._heart_mask
    ban_first: bool = rules.no_points_first_trick
    redeal: bool = rules.only_hearts_lead == "redeal"
    kitty: int = state.kitty if state.kitty_taker is None else 0
    leader: int = state.leader
    done: int = state.tricks_done
    broken: bool = state.hearts_broken
    following: list[int] = list(range(1, n))
    following.append(0)  # following[seat]: the next seat in play order
    cards: list[int] = state.trick_cards
    seat: int = leader
    won: int = 0
    # Every card but those played here, which leave `hands` at the end: compiled, each mask
    # written into a list is a new object.
    unplayed: int = FULL_DECK  # (one deck here; and non-negative, as Python's ints are fastest)
    led: int = state.led_suit
    key: int = state.win_key
    winner: int = state.win_seat
    hand: int
    legal: int
    bit: int
    k: int
    index: int
    first: bool
    offset: int
    suit_mask: int
    if cards:  # resume the trick in progress
        seat = (leader + len(cards) - 1) % n
        for index in cards:
            won |= 1 << index
        state.trick_cards = []
    while True:
        if not cards:
            seat = leader
            hand = hands[seat] & unplayed
            if done == 0:
                legal = state._legal_play_mask()
            elif broken:
                legal = hand
            else:
                legal = hand & ~heart_mask or hand
            k = choose(32) % _bit_count(legal)
            while k:
                legal &= legal - 1
                k -= 1
            bit = legal & -legal
            unplayed ^= bit
            won = bit
            index = _INDEX_OF_BIT[bit % 131]
            cards = [index]
            led = CARD_SUIT[index]
            key = 20 + CARD_RANK[index] if led == trump else CARD_RANK[index]
            winner = seat
        first = done == 0 and ban_first
        offset = 20 if led == trump else 0
        # The led suit's cards not yet played: all a seat can follow with this trick (the
        # cards played since are other seats').
        suit_mask = SUIT_MASKS_ONE_DECK[led] & unplayed
        for _ in range(n - len(cards)):
            seat = following[seat]
            hand = hands[seat]
            legal = hand & suit_mask
            if legal:
                if legal & (legal - 1):
                    k = choose(32) % _bit_count(legal)
                    while k:
                        legal &= legal - 1
                        k -= 1
                bit = legal & -legal
                unplayed ^= bit
                won |= bit
                index = _INDEX_OF_BIT[bit % 131]
                cards.append(index)
                # Following suit: beats the best so far only on rank (a trump on a
                # non-trump lead has made key >= 20, out of reach).
                if CARD_RANK[index] + offset > key:
                    key = CARD_RANK[index] + offset
                    winner = seat
                continue
            hand &= unplayed
            legal = state._first_trick_discard(hand) if first else hand
            k = choose(32) % _bit_count(legal)
            while k:
                legal &= legal - 1
                k -= 1
            bit = legal & -legal
            unplayed ^= bit
            won |= bit
            index = _INDEX_OF_BIT[bit % 131]
            cards.append(index)
            if CARD_SUIT[index] == trump and 20 + CARD_RANK[index] > key:
                key = 20 + CARD_RANK[index]
                winner = seat
        if won & breaks_mask:
            broken = True
        log.append((leader, cards, winner))
        cards = []
        taken[winner] = taken[winner] | won
        done += 1
        if kitty:
            state.tricks_done = done
            state._maybe_take_kitty(winner, won, done == last)
            kitty = state.kitty if state.kitty_taker is None else 0
        leader = winner
        if done == last:
            break
        if redeal and not broken and not hands[leader] & unplayed & ~heart_mask:
            break
    for k in range(n):
        hands[k] = hands[k] & unplayed
    state.leader = state.current = leader
    state.tricks_done = done
    state.hearts_broken = broken
    state.led_suit = led
    state.win_key = key
    state.win_seat = winner
    state._legal = -1
    if done == last:
        state._finish_hand()
    else:
        state._void_hand()


def pass_out(state: GameState, choose: Callable[[int], int]) -> None:
    """Random passes for every seat still to pass, then the exchange.

    >>> import random
    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_preset("standard"), seed=2)
    >>> pass_out(state, random.Random(1).getrandbits)
    >>> state.phase.value, [len(state.hand_of(seat)) for seat in range(4)]
    ('play', [13, 13, 13, 13])
    """
    count = state.rules.pass_count
    for seat in range(state.current, state.n):
        chosen = state.pass_lists[seat]
        mask = state.pass_masks[seat]
        free = state.hands[seat] & ~mask
        while len(chosen) < count:
            k = choose(32) % _bit_count(free)
            pick = free
            while k:
                pick &= pick - 1
                k -= 1
            bit = pick & -pick
            free ^= bit
            mask |= bit
            chosen.append(_INDEX_OF_BIT[bit % 131])
        state.pass_masks[seat] = mask
    state.current = state.n - 1
    state._exchange()


def _pick(legal: int, choose: Callable[[int], int]) -> int:
    # A uniformly random set bit (modulo bias of a 32-bit draw: below 2^-26).
    k = choose(32) % _bit_count(legal)
    while k:
        legal &= legal - 1
        k -= 1
    return _INDEX_OF_BIT[(legal & -legal) % 131]
