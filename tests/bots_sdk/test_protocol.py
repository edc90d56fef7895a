"""The line decoder (bots_sdk.protocol): whatever a bot writes, the referee gets one of the
messages a bot may send, fields typed and text clean, or a ProtocolError; nothing else."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots_sdk.protocol import (
    ERROR_CLASSES,
    MAX_ACTION_CHARS,
    MAX_ACTION_ITEMS,
    MAX_DEPTH,
    MAX_NAME,
    MAX_TEXT,
    Action,
    Error,
    ProtocolError,
    Ready,
    clean_text,
    decode,
    decode_reply,
    decode_trusted,
    encode,
)
from bots_sdk.view import View
from engine.rules import RuleSet
from engine.state import GameState, Phase
from tests.engine.helpers import EVERY_FIELD_PRESETS, observations
from tests.hostile.lines import hostile_lines, json_values

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _is_clean(text: str) -> bool:
    """Storable as UTF-8 and free of NUL."""
    text.encode("utf-8")  # raises on a lone surrogate
    return "\x00" not in text


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@SETTINGS
@given(line=hostile_lines, newline=st.booleans())
def test_any_line_is_a_typed_reply_or_a_protocol_error(line: bytes, newline: bool) -> None:
    try:
        reply = decode_reply(line + b"\n" if newline else line)
    except ProtocolError as exc:
        assert _is_clean(str(exc)) and len(str(exc)) < 400
        return
    if isinstance(reply, Ready):
        assert isinstance(reply.name, str) and len(reply.name) <= MAX_NAME
        assert _is_clean(reply.name)
    elif isinstance(reply, Action):
        assert type(reply.id) is int
        if isinstance(reply.action, list):
            assert len(reply.action) <= MAX_ACTION_ITEMS
            assert all(type(item) is str and len(item) <= MAX_ACTION_CHARS for item in reply.action)
        else:
            assert type(reply.action) is str and len(reply.action) <= MAX_ACTION_CHARS
    else:
        assert isinstance(reply, Error)
        assert reply.kind in ERROR_CLASSES
        assert isinstance(reply.detail, str) and len(reply.detail) <= MAX_TEXT
        assert _is_clean(reply.detail)


valid_replies = st.one_of(
    st.builds(Ready, st.text(max_size=MAX_NAME).map(lambda t: clean_text(t, None))),
    st.builds(
        Action,
        st.integers(min_value=-(10**20), max_value=10**20),
        st.text(max_size=MAX_ACTION_CHARS)
        | st.lists(st.text(max_size=MAX_ACTION_CHARS), max_size=MAX_ACTION_ITEMS),
    ),
    st.builds(
        Error,
        st.sampled_from(ERROR_CLASSES),
        st.text(max_size=MAX_TEXT).map(clean_text),
    ),
)


@SETTINGS
@given(reply=valid_replies)
def test_every_valid_reply_round_trips(reply: Ready | Action | Error) -> None:
    assert decode_reply(encode(reply.to_dict())) == reply


@SETTINGS
@given(value=json_values)
def test_nesting_is_refused_exactly_past_the_limit(value: Any) -> None:
    # Strings full of brackets, quotes and backslashes must not fool the depth count.
    message = {"type": "x", "value": [[[[[[[[[[[[[value]]]]]]]]]]]]]}
    line = json.dumps(message).encode()
    try:
        decoded = decode(line)
    except ProtocolError as exc:
        deep = "nested deeper" in str(exc)
        assert deep == (_depth(message) > MAX_DEPTH), exc
        return
    assert _depth(message) <= MAX_DEPTH
    assert decoded == json.loads(line)


def test_named_refusals() -> None:
    refusals = {
        b'{"type":"action","id":1,"action":' + b"[" * 20_000 + b"]" * 20_000 + b"}": "deeper",
        b'{"type":"action","id":[1],"action":"2C"}': "'id' must be an integer, not a list",
        b'{"type":"action","id":true,"action":"2C"}': "not a boolean",
        b'{"type":"action","id":1.0,"action":"2C"}': "not a number",
        b'{"type":"action","id":1,"action":{"a":1}}': "'action' must be a string",
        b'{"type":"action","id":1,"action":["2C",3]}': "items must be strings",
        b'{"type":"action","id":1,"action":' + json.dumps(["2C"] * 60).encode() + b"}": "items",
        b'{"type":"action","id":1,"action":"' + b"x" * 17 + b'"}': "longer than 16",
        b'{"type":"action","id":1' + b"0" * 5000 + b',"action":"2C"}': "more than 32 digits",
        b'{"type":"action","id":NaN,"action":"2C"}': "NaN is not a JSON number",
        b'{"type":"action","id":1,"action":-Infinity}': "-Infinity is not a JSON number",
        b'{"type":"action","id":1e400,"action":"2C"}': "too large a number",
        b'{"type":"action","id":1,"id":1,"action":"2C"}': "a key appears twice: 'id'",
        b'{"type":"action","id":1,"action":"\xff"}': "not UTF-8",
        b'{"type":"action","id":1,"action":"\xed\xa0\x80"}': "not UTF-8",
        b'{"type":"ready","name":' + json.dumps("n" * 65).encode() + b"}": "longer than 64",
        b'{"type":"ready"}': "'name' must be a string, not null",
        b'{"type":"error","class":{"a":1}}': "'class' must be a string, not an object",
        b'{"type":"error","class":"timeout"}': "must be one of crash, memory, protocol",
        b'{"type":"error","class":"crash","detail":[1]}': "'detail' must be a string",
        b'{"type":"hello"}': "a bot sends 'ready', 'action' or 'error': 'hello'",
        b'{"type":5}': "with a 'type'",
        b"[1, 2]": "with a 'type'",
        b"\xef\xbb\xbf{}": "not a JSON object",
        b"x" * 70_000: "longer than 65536 bytes",
    }
    for line, words in refusals.items():
        with pytest.raises(ProtocolError, match=None) as caught:
            decode_reply(line)
        assert words in str(caught.value), (line[:60], str(caught.value))


def test_text_from_the_bot_is_cleaned() -> None:
    error = decode_reply(
        b'{"type":"error","class":"crash","detail":"a\\u0000b\\ud800' + b"x" * 900 + b'"}'
    )
    assert isinstance(error, Error)
    assert error.detail.startswith("a\ufffdb\ufffdx") and len(error.detail) == MAX_TEXT
    ready = decode_reply(b'{"type":"ready","name":"\\udc80bot","extra":{"ignored":[]}}')
    assert ready == Ready("\ufffdbot")


def test_every_message_the_referee_sends_is_read_by_the_host() -> None:
    # The bot side decodes with the same limits: a whole game's views must pass them.
    for preset in ("standard", "omnibus", "hokm_40", "black_lady_54"):
        rules = RuleSet.from_preset(preset)
        state = GameState(rules, seed=3)
        rng = random.Random(3)
        hello = {
            "type": "hello",
            "protocol": 1,
            "seat": 0,
            "seed": 2**64 - 1,
            "rules": rules.to_spec(),
        }
        assert decode(encode(hello)) == hello
        number = 0
        while state.phase not in (Phase.GAME_OVER, Phase.HAND_OVER):
            number += 1
            view = View.from_observation(state.observation(state.current), time_left=0.5)
            message = {"type": "act", "id": number, "decision": "play", "view": view.to_dict()}
            assert decode(encode(message)) == json.loads(json.dumps(message))
            state.apply(rng.choice(state.legal_actions()))
        end = View.from_observation(state.observation(0))
        assert decode(encode({"type": "hand_end", "view": end.to_dict()}))["type"] == "hand_end"


def test_encode_escapes_what_utf8_cannot_hold() -> None:
    line = encode({"type": "error", "class": "crash", "detail": "lone \ud800"})
    assert line.decode("utf-8").endswith('\\ud800"}\n')
    assert decode_reply(line) == Error("crash", "lone \ufffd")


def test_the_view_is_defined_once_and_documented_field_by_field() -> None:
    import dataclasses
    import re

    from bots_sdk import Bot
    from bots_sdk.protocol import DECISION_METHODS, PHASE_DECISIONS
    from bots_sdk.view import View
    from engine.state import Phase
    from tests.support import PROJECT_DIR

    text = (PROJECT_DIR / "docs" / "protocol.md").read_text()
    table = text[text.index("| `seat`, `rules` |") :].split("\n\n")[0]
    documented = {
        name for row in table.splitlines() for name in re.findall(r"`(\w+)`", row.split("|")[1])
    }
    assert documented == {f.name for f in dataclasses.fields(View)}
    # One decision map: every phase has its decision, every decision its Bot method.
    assert set(PHASE_DECISIONS) == {phase.value for phase in Phase}
    assert set(PHASE_DECISIONS.values()) - {"none"} == set(DECISION_METHODS)
    assert all(callable(getattr(Bot, method)) for method in DECISION_METHODS.values())


def test_a_view_is_the_observation_with_its_decision_and_clock() -> None:
    """The view is the engine's observation (its fields declared there, once) with the
    decision its phase asks for and the clock; it goes over the wire and through pickle
    whole, decision after decision, on rules that use every field."""
    import dataclasses
    import pickle

    from bots_sdk.protocol import PHASE_DECISIONS
    from bots_sdk.view import View
    from engine.state import Observation

    shared = [f.name for f in dataclasses.fields(Observation)]
    assert [f.name for f in dataclasses.fields(View)] == [*shared, "decision", "time_left"]
    for preset in EVERY_FIELD_PRESETS:
        for seen in observations(preset, seed=5):
            view = View.from_observation(seen, 1.5)
            assert isinstance(view, Observation)
            assert all(getattr(view, name) == getattr(seen, name) for name in shared)
            assert (view.decision, view.time_left) == (PHASE_DECISIONS[seen.phase], 1.5)
            assert View.from_dict(json.loads(json.dumps(view.to_dict()))) == view
            assert pickle.loads(pickle.dumps(view)) == view


@pytest.mark.parametrize(
    "line, why",
    [
        (b"not json\n", "not a JSON object"),
        (b"\xff\xfe\n", "not a JSON object"),
        (b"[" * 100_000 + b"\n", "not a JSON object"),
        (b"[1, 2]\n", "with a 'type'"),
        (b'{"type": 3}\n', "with a 'type'"),
    ],
)
def test_the_hosts_reader_refuses_what_is_not_a_message_saying_why(line: bytes, why: str) -> None:
    """The host reads the referee's lines with json alone; a broken one is still a
    ProtocolError (the host answers it with a protocol error), never another exception."""
    with pytest.raises(ProtocolError, match=why):
        decode_trusted(line)
    assert decode_trusted(b'{"type": "act", "id": 7}\n') == {"type": "act", "id": 7}
