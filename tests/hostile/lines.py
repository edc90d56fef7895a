"""Hypothesis strategies for what a hostile bot may write as one line: raw bytes, any JSON
value (NaN and lone surrogates included), the protocol's messages with fields of any type,
deep and unbalanced nesting, numbers past every limit, repeated keys, broken encodings, and
valid messages with bytes spliced in."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from bots_sdk.protocol import ERROR_CLASSES

#: Any JSON value Python's encoder writes, NaN/Infinity and lone surrogates included.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["2C", "QS", "add", "subtract", "H", "\x00", "\ud800", "\udc80x"]),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=25,
)

_cards = st.lists(st.sampled_from(["2C", "3C", "4C", "QS", "AH", "TD", "10h", "ZZ"]), max_size=4)

#: Messages of a type a bot may send (and some it may not), each field of any type.
messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["ready", "action", "error", "hello", "bye", ""]) | json_values},
    optional={
        "name": st.text(max_size=80) | json_values,
        "id": st.integers(min_value=-2, max_value=3) | json_values,
        "action": st.sampled_from(["2C", "add"]) | _cards | json_values,
        "class": st.sampled_from(ERROR_CLASSES) | json_values,
        "detail": st.text(max_size=300) | json_values,
        "extra": json_values,
    },
)


def _encoded(value: Any, how: str) -> bytes:
    if how == "ascii":
        return json.dumps(value).encode()
    text = json.dumps(value, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")  # lone surrogates: CESU-8, not UTF-8


@st.composite
def encoded_messages(draw: st.DrawFn) -> bytes:
    """A message (or any value), written as escaped ASCII or as raw (possibly CESU-8) text."""
    value = draw(messages | json_values)
    return _encoded(value, draw(st.sampled_from(["ascii", "raw"])))


@st.composite
def nestings(draw: st.DrawFn) -> bytes:
    """Arrays and objects nested up to 30,000 deep, balanced or not, bare or as an action,
    with brackets and escaped quotes inside strings to mislead a scanner."""
    depth = draw(st.integers(min_value=0, max_value=30_000))
    opener, closer = draw(
        st.sampled_from([(b"[", b"]"), (b'{"a":', b"}"), (b'["[\\"{",', b"]"), (b"[{", b"}]")])
    )
    inner = draw(st.sampled_from([b"", b"1", b'"]]]}}"', b'"\\\\"', b"null"]))
    closing = draw(st.sampled_from(["all", "none", "half", "one more"]))
    count = {"all": depth, "none": 0, "half": depth // 2, "one more": depth + 1}[closing]
    body = opener * depth + inner + closer * count
    if draw(st.booleans()):
        return b'{"type":"action","id":1,"action":' + body + b"}"
    return body


@st.composite
def numbers(draw: st.DrawFn) -> bytes:
    """Ids and actions that are numbers of any size, float or int, finite or not."""
    digits = draw(st.integers(min_value=1, max_value=6_000))
    number = draw(
        st.sampled_from(
            [
                b"1" + b"0" * digits,
                b"-" + b"9" * digits,
                b"1e" + str(digits).encode(),
                b"0." + b"1" * digits,
                b"NaN",
                b"Infinity",
                b"-Infinity",
                b"1.0",
                b"true",
            ]
        )
    )
    field = draw(st.sampled_from([b"id", b"action"]))
    other = b'"action":"2C"' if field == b"id" else b'"id":1'
    return b'{"type":"action","' + field + b'":' + number + b"," + other + b"}"


repeated_keys = st.sampled_from(
    [
        b'{"type":"action","id":1,"id":2,"action":"2C"}',
        b'{"type":"action","type":"ready","id":1,"action":"2C","name":"x"}',
        b'{"type":"error","class":"crash","class":"memory"}',
        b'{"type":"ready","name":"a","name":{"b":1}}',
    ]
)


@st.composite
def spliced(draw: st.DrawFn) -> bytes:
    """A well-formed message with arbitrary bytes written over part of it."""
    line = bytearray(draw(encoded_messages()))
    at = draw(st.integers(min_value=0, max_value=len(line)))
    cut = draw(st.integers(min_value=0, max_value=4))
    line[at : at + cut] = draw(st.binary(min_size=1, max_size=8))
    return bytes(line)


#: Any line a hostile bot may write (without its newline).
hostile_lines = st.one_of(
    st.binary(max_size=200),
    encoded_messages(),
    nestings(),
    numbers(),
    repeated_keys,
    spliced(),
    st.tuples(st.integers(min_value=65_000, max_value=66_000), encoded_messages()).map(
        lambda long: b" " * long[0] + long[1]  # whitespace JSON allows, past the line cap
    ),
)
