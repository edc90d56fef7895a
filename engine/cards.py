"""Cards: two-character text at the boundary, bit positions inside.

A card's text is its rank (``2 3 4 5 6 7 8 9 T J Q K A``) then its suit (``C D H S``):
``2C``, ``TD``, ``QS``, ``AH``. Inside the engine a card is an index and a set of cards is an
``int`` bitmask. The index of a card is its position in the sorted order of the card texts,
so iterating a mask's bits from low to high yields texts already sorted as ``sorted()`` sorts
them; every list of cards the engine returns is in that order.

The double deck of Cancellation is built in, not bolted on: indices 0–51 are the first deck,
52–103 the second copy of the same cards. Both copies have the same text; a mask "folded"
with :func:`fold` tells which faces are present.

>>> card_index("QS")
47
>>> card_text(47), card_text(47 + 52)
('QS', 'QS')
>>> cards_to_texts(mask_of(["AH", "2C", "TD"]))
['2C', 'AH', 'TD']
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Final

#: Ranks from low to high; aces are high.
RANKS: Final = "23456789TJQKA"
#: Suits in their conventional order: clubs, diamonds, hearts, spades.
SUITS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3

#: ``int.bit_count`` as a plain function: compiled (mypyc), ``mask.bit_count()`` looks the
#: method up by name at every call, and this is called straight (pure Python: no slower).
_bit_count: Final = int.bit_count
#: Whether this module runs compiled (its file then is the extension, not the source).
_COMPILED: Final = not __file__.endswith(".py")

DECK_SIZE: Final = 52
#: Mask of every card of one deck.
FULL_DECK: Final = (1 << DECK_SIZE) - 1

# The index order is the order of the texts: rank characters sort as 2..9 A J K Q T.
_RANK_TEXT_ORDER: Final = "23456789AJKQT"

#: CARD_TEXTS[i] is the text of card index i (0..103; the second deck repeats the first).
CARD_TEXTS: Final[tuple[str, ...]] = tuple(r + s for r in _RANK_TEXT_ORDER for s in SUITS) * 2
#: Suit (0..3) of each index.
CARD_SUIT: Final[tuple[int, ...]] = tuple(SUITS.index(t[1]) for t in CARD_TEXTS)
#: Strength of each index within its suit: 0 for a two .. 12 for an ace.
CARD_RANK: Final[tuple[int, ...]] = tuple(RANKS.index(t[0]) for t in CARD_TEXTS)
_INDEX: Final[dict[str, int]] = {text: i for i, text in enumerate(CARD_TEXTS[:DECK_SIZE])}


def _suit_mask(suit: int) -> int:
    mask = 0
    for i in range(DECK_SIZE):
        if CARD_SUIT[i] == suit:
            mask |= 1 << i
    return mask


#: SUIT_MASKS[s]: every card of suit s, in both decks.
SUIT_MASKS: Final[tuple[int, ...]] = tuple(
    _suit_mask(s) | (_suit_mask(s) << DECK_SIZE) for s in range(4)
)
#: The same, first deck only: with one deck every mask then fits in 52 bits, which compiled
#: code (mypyc) keeps as machine integers; a 104-bit operand sends it down a slow generic path.
SUIT_MASKS_ONE_DECK: Final[tuple[int, ...]] = tuple(_suit_mask(s) for s in range(4))


class CardError(ValueError):
    """A card's text is not one of the 52 card names.

    >>> card_index("1S")
    Traceback (most recent call last):
    ...
    engine.cards.CardError: '1S' is not a card (use rank 2-9 T J Q K A, suit C D H S)
    """


def card_index(text: str) -> int:
    """The index (0..51) of a card's text; case-insensitive, ``10`` accepted for ``T``.

    >>> card_index("2C"), card_index("10h") == card_index("TH")
    (0, True)
    """
    if not isinstance(text, str):
        raise CardError(f"a card is a two-character text like 'QS', not {text!r}")
    key = text.strip().upper()
    if key.startswith("10"):
        key = "T" + key[2:]
    try:
        return _INDEX[key]
    except KeyError:
        raise CardError(f"{text!r} is not a card (use rank 2-9 T J Q K A, suit C D H S)") from None


def card_text(index: int) -> str:
    """The text of a card index (either deck).

    >>> card_text(0), card_text(51)
    ('2C', 'TS')
    """
    return CARD_TEXTS[index]


def mask_of(texts: Iterable[str]) -> int:
    """The mask of distinct card texts (first deck). Duplicates raise :class:`CardError`.

    >>> bin(mask_of(["2C", "2D"]))
    '0b11'
    """
    mask = 0
    for text in texts:
        bit = 1 << card_index(text)
        if mask & bit:
            raise CardError(f"{text} is listed twice")
        mask |= bit
    return mask


def fold(mask: int) -> int:
    """The faces present in a mask of either deck, as a first-deck mask.

    >>> fold((1 << 0) | (1 << 52)) == 1
    True
    """
    return (mask | (mask >> DECK_SIZE)) & FULL_DECK


# Pure Python: text lists for 13-bit chunks of a mask, four lookups per mask (the per-card
# loop below is the faster where compiled, these tables where interpreted).
_CHUNK: Final = 13
_CHUNK_MASK: Final = (1 << _CHUNK) - 1


def _chunk_table(offset: int) -> tuple[tuple[str, ...], ...]:
    names = CARD_TEXTS[offset : offset + _CHUNK]
    # Entry (high << 7) | low is the cards of the low 7 bits, then those of the high 6 bits;
    # each half is built by doubling (the entries with bit b set: every earlier one + card b).
    low: list[tuple[str, ...]] = [()]
    for name in names[:7]:
        low += [entry + (name,) for entry in low]
    high: list[tuple[str, ...]] = [()]
    for name in names[7:]:
        high += [entry + (name,) for entry in high]
    return tuple([a + b for b in high for a in low])


#: The four tables, built at their first use (:func:`_texts_by_chunk`): 32,768 small tuples,
#: some 3 MB, that a bot process which never lists cards by text does not need.
_TEXTS_BY_CHUNK: Final[list[tuple[tuple[str, ...], ...]]] = []


def _texts_by_chunk() -> list[tuple[tuple[str, ...], ...]]:
    """The chunk tables (:data:`_TEXTS_BY_CHUNK`), built at the first call."""
    if not _TEXTS_BY_CHUNK:
        # With the garbage collector on, its passes over everything already allocated would
        # cost several times the building.
        collecting = gc.isenabled()
        gc.disable()
        try:
            tables = [_chunk_table(offset) for offset in range(0, DECK_SIZE, _CHUNK)]
        finally:
            if collecting:
                gc.enable()
        _TEXTS_BY_CHUNK[:] = tables  # (all four at once, whoever else is building them)
    return _TEXTS_BY_CHUNK


def _texts_by_bit() -> tuple[str, ...]:
    table = [""] * 67
    for i in range(DECK_SIZE):
        table[(1 << i) % 67] = CARD_TEXTS[i]
    return tuple(table)


def _indices_by_bit() -> tuple[int, ...]:
    table = [-1] * 131
    for i in range(2 * DECK_SIZE):
        table[(1 << i) % 131] = i
    return tuple(table)


# The text of a one-bit mask 1 << i (i < 52) is at (1 << i) % 67: 2 has order 66 modulo the
# prime 67, so the 52 remainders differ.
_TEXT_OF_BIT: Final = _texts_by_bit()


# The index of a one-bit mask 1 << i (i < 130: either deck) is at (1 << i) % 131, as 2 has
# order 130 modulo the prime 131.
_INDEX_OF_BIT: Final = _indices_by_bit()


def texts_of(m: int) -> list[str]:
    """The sorted texts of a first-deck mask (the text API's hot path: every
    ``legal_actions`` ends here): compiled, a card per step; interpreted, by chunk tables.

    >>> texts_of(mask_of(["KS", "3H", "2C"]))
    ['2C', '3H', 'KS']
    """
    if not _COMPILED:
        t0, t1, t2, t3 = _TEXTS_BY_CHUNK or _texts_by_chunk()
        return [*t0[m & 8191], *t1[(m >> 13) & 8191], *t2[(m >> 26) & 8191], *t3[m >> 39]]
    texts: list[str] = []
    while m:
        low = m & -m
        texts.append(_TEXT_OF_BIT[low % 67])
        m ^= low
    return texts


def cards_to_texts(mask: int) -> list[str]:
    """Sorted texts of the faces in ``mask`` (a card held twice is listed once).

    >>> cards_to_texts(mask_of(["KS", "3H"]))
    ['3H', 'KS']
    """
    return texts_of((mask | (mask >> DECK_SIZE)) & FULL_DECK)


def cards_to_texts_multi(mask: int) -> list[str]:
    """Sorted texts of every card in ``mask``, a card held twice listed twice.

    >>> cards_to_texts_multi((1 << 0) | (1 << 52) | (1 << 1))
    ['2C', '2C', '2D']
    """
    both = mask & (mask >> DECK_SIZE) & FULL_DECK
    if not both:
        return cards_to_texts(mask)
    return sorted(cards_to_texts(mask) + cards_to_texts(both))


def indices(mask: int) -> list[int]:
    """The set bits of ``mask`` (a mask of either deck), lowest first.

    >>> indices(0b1010)
    [1, 3]
    """
    out = []
    while mask:
        low = mask & -mask
        out.append(_INDEX_OF_BIT[low % 131])
        mask ^= low
    return out
