"""The referee never raises on what a bot writes: a hostile reply is the seat's fault, the
match completes with a valid record that any UTF-8 store accepts, and no process started by
the match outlives it, even when the referee's side fails during start-up."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from bots_sdk.referee.players import Answer, Fault, ProcessPlayer
from bots_sdk.referee.runner import GameResult, run_match
from bots_sdk.sandbox import Bubblewrap, Launcher, Unsandboxed
from bots_sdk.view import View
from engine.record import verify
from engine.rules import RuleSet
from engine.state import GameState
from tests.hostile.lines import hostile_lines
from tests.sandboxes import UNHURRIED, processes_of, sandbox_problem, seat_uids

BOTS = Path(__file__).parent / "bots"
#: No verdict here is about time: a clock no busy machine's stall runs out of first.
CLOCK = UNHURRIED


@pytest.fixture(scope="module")
def bubblewrap() -> None:
    problem = sandbox_problem("bubblewrap")
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")


@pytest.fixture
def sandboxed(bubblewrap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIDEL_SANDBOX", "bubblewrap")


# --- what is alive ------------------------------------------------------------------------


def _descendants() -> set[tuple[int, int]]:
    """(pid, start time) of every process below this one, zombies included (one left
    unreaped is a leak too): the ppid chains of /proc/*/stat."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append((int(entry.name), int(fields[19])))
    found: set[tuple[int, int]] = set()
    todo = [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child[0])
    return found


def _assert_storable(value: Any) -> None:
    """No NUL and no lone surrogate in any key or text: what PostgreSQL's text and jsonb
    refuse, and what strict UTF-8 cannot encode."""
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate raises here
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            todo += item
        elif isinstance(item, str):
            assert "\x00" not in item, item[:80]


# --- whole matches, sandboxed --------------------------------------------------------------


def _match(bot: str) -> GameResult:
    before = _descendants()
    result = run_match(
        "standard",
        11,
        [str(BOTS / f"{bot}.py"), "low", "random", "heuristic"],
        hands=1,
        time_control=CLOCK,
    )
    assert _descendants() - before == set(), "a process started by the match is still there"
    assert processes_of(seat_uids()) == [], "a process of a bot's uid survived the match"
    game = result.games[0]
    assert verify(game.record)["valid"], "the match must complete with a valid record"
    assert len([h for h in game.state.history if not h.void]) == 1
    _assert_storable(result.to_dict())
    return game


@pytest.mark.parametrize(
    ("bot", "decision", "kind", "words"),
    [
        ("deep_nesting", "pass", "protocol", "nested deeper than 16 levels"),
        ("list_id", "pass", "protocol", "'id' must be an integer, not a list"),
        ("dict_action", "pass", "protocol", "'action' must be a string, not an object"),
        ("non_utf8", "pass", "protocol", "not UTF-8"),
        ("huge_int_id", "pass", "protocol", "more than 32 digits"),
        ("nan_id", "pass", "protocol", "NaN is not a JSON number"),
        ("hostile_ready", "start", "protocol", "'name' must be a string, not an object"),
        ("junk_in_hello", "start", "protocol", "nested deeper than 16 levels"),
        ("crash_in_hello", "start", "crash", "closed its output"),
    ],
)
def test_a_hostile_reply_is_the_seats_fault(
    sandboxed: None, bot: str, decision: str, kind: str, words: str
) -> None:
    game = _match(bot)
    faults = game.seats[0].faults
    assert faults and faults[0]["class"] == kind, faults
    assert faults[0]["decision"] == decision, faults
    assert words in Fault.from_dict(faults[0]).owner_text(), faults
    assert game.seats[0].replaced  # the fallback played the rest
    assert all(not seat.faults for seat in game.seats[1:])


def test_nul_and_surrogates_never_reach_the_record(sandboxed: None) -> None:
    game = _match("dirty_stderr")
    seat = game.seats[0]
    assert [f["class"] for f in seat.faults] == ["crash"]
    assert seat.faults[0]["said"].startswith("RuntimeError: nul:\ufffd lone:")
    assert seat.faults[0]["detail"] == "the bot reported a crash"  # (its words: its owner's)
    assert "DIRTY nul:\ufffd cesu:\ufffd" in seat.stderr  # kept, made storable
    assert "Traceback" in seat.stderr


def test_a_python_bots_wrong_answers_stay_illegal_not_protocol(tmp_path: Path) -> None:
    # The SDK's host sends whatever the bot returned in the shape the protocol allows.
    odd = tmp_path / "odd.py"
    odd.write_text(
        "from bots_sdk import Bot\n\n\nclass Odd(Bot):\n"
        "    name = 'n' * 500 + '\\x00'\n\n"
        "    def pass_cards(self, view):\n        return [view.hand[0]] * 80\n\n"
        "    def play(self, view):\n        return None if view.legal[0] != 'x' else 'q' * 99\n"
    )
    result = run_match(
        "standard",
        11,
        [str(odd), "low", "random", "heuristic"],
        hands=1,
        time_control=CLOCK,
        unsafe=True,
    )
    faults = result.games[0].seats[0].faults
    assert [f["class"] for f in faults] == ["illegal"] * 3, faults
    assert "None" in faults[1]["said"] and "None" not in faults[1]["detail"]
    _assert_storable(result.to_dict())


def test_a_failure_on_the_referees_side_during_start_up_leaves_no_process() -> None:
    # Seat 0 starts a real bot; seat 3's path cannot even be resolved: run_match raises,
    # and the process of seat 0 must be gone with it.
    before = _descendants()
    with pytest.raises(ValueError, match="null"):
        run_match(
            "standard",
            11,
            [str(BOTS / "deep_nesting.py"), "low", "random", "bad\x00.py"],
            hands=1,
            time_control=CLOCK,
            unsafe=True,
        )
    assert _descendants() - before == set()


# --- a live seat, fed any line -------------------------------------------------------------

#: A bot whose module takes over from the host as it is loaded (after ``hello``): it replies
#: ``LINE`` to ``hello`` (stage "hello"), or says ready and replies ``LINE`` to the first
#: ``act`` (stage "act"); then it waits for ``bye`` or the end of its input.
ECHO = """\
import os
import sys

STAGE = {stage!r}
LINE = {line!r}


def send(data):
    sys.__stdout__.buffer.write(data)
    sys.__stdout__.buffer.flush()


if STAGE == "act":
    send(b'{{"type":"ready","name":"echo"}}\\n')
    sys.stdin.buffer.readline()
send(LINE)
for message in sys.stdin.buffer:
    if b'"bye"' in message:
        break
os._exit(0)
"""

RULES = RuleSet.from_preset("standard")
VIEW = View.from_observation(GameState(RULES, seed=5).observation(0), time_left=5.0)
_names = itertools.count()


def _feed(launcher: Launcher, directory: Path, stage: str, line: bytes) -> None:
    """Run a bot that writes ``line`` at ``stage``; the seat's answers must be an Answer or
    a Fault, with text a record can hold, and the bot must be gone after ``close``."""
    path = directory / f"echo_{next(_names)}.py"
    path.write_text(ECHO.format(stage=stage, line=line + b"\n"))
    before = _descendants()
    player = ProcessPlayer(path, launcher, startup_timeout=10.0)
    try:
        started = player.start(0, RULES.to_spec(), seed=1)
        assert started is None or isinstance(started, Fault)
        outcomes: list[Any] = [started]
        if stage == "act" and started is None:
            outcomes.append(player.decide("pass", VIEW, limit=5.0))
            assert isinstance(outcomes[-1], (Answer, Fault))
    finally:
        stderr = player.close()
    assert _descendants() - before == set(), "the bot outlived its seat"
    assert processes_of(seat_uids()) == [], "a process of the bot's uid outlived its seat"
    _assert_storable(
        {
            "name": player.name,
            "stderr": stderr,
            "faults": [o.detail for o in outcomes if isinstance(o, Fault)],
            "answers": [o.action for o in outcomes if isinstance(o, Answer)],
        }
    )


@pytest.fixture(scope="module")
def echo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("echo")


LIVE = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("stage", ["hello", "act"])
@settings(LIVE, max_examples=40)
@given(line=hostile_lines)
def test_a_live_seat_turns_any_line_into_an_answer_or_a_fault(
    echo_dir: Path, stage: str, line: bytes
) -> None:
    _feed(Unsandboxed(), echo_dir, stage, line)


@pytest.mark.parametrize("stage", ["hello", "act"])
@settings(LIVE, max_examples=10)
@given(line=hostile_lines)
def test_a_sandboxed_seat_turns_any_line_into_an_answer_or_a_fault(
    bubblewrap: None, echo_dir: Path, stage: str, line: bytes
) -> None:
    _feed(Bubblewrap(), echo_dir, stage, line)
