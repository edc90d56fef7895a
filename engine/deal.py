"""Deterministic dealing: the deal of hand k is a pure function of (rules, seed, k).

The shuffle is derived from SHAKE-256 of ``"bidel-deal/1:{seed}:{k}:{attempt}"``: each card
of the deck gets a 64-bit key from the digest and the deck is sorted by key (ties, at odds of
2^-64, fall back to card order). SHAKE-256 is a standard, so the same seed deals the same
cards on every machine and every Python version, and nothing depends on what players did in
earlier hands: a tournament can replay the same deals with the seats rotated.

Cards are dealt one at a time in seat order (card j of the shuffled deck to seat j mod n);
what is left after every seat has ``hand_size`` cards is the kitty. ``attempt`` numbers the
redeals of one hand (only-hearts lead under ``only_hearts_lead="redeal"``).

>>> from engine.rules import RuleSet
>>> hands, kitty = deal_texts(RuleSet.from_preset("standard"), seed=1, hand_number=0)
>>> [len(h) for h in hands], kitty
([13, 13, 13, 13], [])
>>> deal_texts(RuleSet.from_preset("standard"), 1, 0) == (hands, kitty)
True
"""

from __future__ import annotations

import struct
from typing import Final

from engine.cards import DECK_SIZE, cards_to_texts_multi
from engine.rules import RuleSet

DEAL_VERSION: Final = 1
#: Whether this module runs compiled (its file then is the extension, not the source).
_COMPILED: Final = not __file__.endswith(".py")

# _KEYS[n] reads n big-endian 64-bit keys (a Struct made once, not a format parsed per deal).
_KEYS: Final = tuple(struct.Struct(f">{n}Q") for n in range(2 * DECK_SIZE + 1))

# key_order sorts each key's top 23 bits packed above its position (7 bits: up to two
# decks): 30 bits, an int CPython sorts in one machine word.
_POSITION_BITS: Final = 7
_POSITION_MASK: Final = (1 << _POSITION_BITS) - 1


def shuffled_deck(rules: RuleSet, seed: int, hand_number: int, attempt: int = 0) -> list[int]:
    """The card indices in play for ``rules``, in the shuffled order of this hand.

    >>> from engine.cards import card_text
    >>> [card_text(i) for i in shuffled_deck(RuleSet.from_preset("standard"), 1, 0)[:4]]
    ['TD', '3H', 'TC', '5C']
    """
    deck = rules._derived.deck
    size = len(deck)
    import hashlib  # (here: a bot, which never deals, does not load OpenSSL at its start)

    material = f"bidel-deal/{DEAL_VERSION}:{int(seed)}:{int(hand_number)}:{int(attempt)}"
    order = key_order(hashlib.shake_256(material.encode("ascii")).digest(8 * size), size)
    if rules._derived.deck_is_range:
        return order
    return list(map(deck.__getitem__, order))


def key_order(digest: bytes, size: int) -> list[int]:
    """Positions 0..size-1 sorted by their keys (``digest`` read as ``size`` big-endian 64-bit
    keys); equal keys stay in position order.

    Sorting by the keys' top 23 bits (with the position below them) gives the same order
    whenever no two top parts are equal, and costs half as much compiled; when two are
    (about one deal in 6,000), the whole keys decide. Interpreted, the whole keys always do.

    >>> key_order(bytes([0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1]), 2)
    [1, 0]
    """
    if not _COMPILED:  # (interpreted, the one sort by whole keys is the faster)
        return exact_key_order(digest, size)
    packed: list[int] = []
    for position in range(size):
        at = 8 * position
        top = digest[at] << 15 | digest[at + 1] << 7 | digest[at + 2] >> 1
        packed.append(top << _POSITION_BITS | position)
    packed.sort()
    order: list[int] = []
    previous = -1
    for item in packed:
        top = item >> _POSITION_BITS
        if top == previous:
            return exact_key_order(digest, size)
        previous = top
        order.append(item & _POSITION_MASK)
    return order


def exact_key_order(digest: bytes, size: int) -> list[int]:
    """:func:`key_order` by the whole 64-bit keys: the definition the fast path keeps.

    >>> exact_key_order(bytes(8) * 3, 3)
    [0, 1, 2]
    """
    keys = _KEYS[size].unpack(digest)
    # The sort is stable: two equal keys (odds 2^-64 a pair) stay in position order.
    return sorted(range(size), key=keys.__getitem__)


def deal_masks(
    rules: RuleSet, seed: int, hand_number: int, attempt: int = 0
) -> tuple[list[int], int]:
    """Each seat's cards (as masks) and the kitty mask for one hand.

    >>> hands, kitty = deal_masks(RuleSet.from_preset("kitty"), 1, 0)
    >>> [h.bit_count() for h in hands], kitty.bit_count()
    ([12, 12, 12, 12], 4)
    """
    cards = shuffled_deck(rules, seed, hand_number, attempt)
    players, size = rules.players, rules.hand_size
    dealt = players * size
    hands = []
    for seat in range(players):
        mask = 0
        for card in cards[seat:dealt:players]:
            mask |= 1 << card
        hands.append(mask)
    kitty = 0
    for card in cards[dealt:]:
        kitty |= 1 << card
    return hands, kitty


def deal_texts(
    rules: RuleSet, seed: int, hand_number: int, attempt: int = 0
) -> tuple[list[list[str]], list[str]]:
    """Each seat's cards and the kitty, as sorted card texts.

    >>> hands, kitty = deal_texts(RuleSet.from_preset("standard", players=5), 1, 0)
    >>> len(hands[0]), "2C" in sum(hands, [])
    (10, False)
    """
    hands, kitty = deal_masks(rules, seed, hand_number, attempt)
    return [cards_to_texts_multi(h) for h in hands], cards_to_texts_multi(kitty)
