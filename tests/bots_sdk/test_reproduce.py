"""A recorded game played again around one seat (bots_sdk.reproduce): the code that played
answers every decision as recorded, and a changed bot is stopped at the very decision where
it first departs — found here independently, by walking the record."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from bots_sdk import highest
from bots_sdk.referee.runner import RefereeConfig, TimeControl, run_match
from bots_sdk.reproduce import BotRaised, RecordError, reproduce
from bots_sdk.tracebacks import last_frame, own_frames, own_traceback
from engine.rules import RuleSet
from engine.state import GameState, Phase
from tests.sandboxes import sandbox_problem

#: Draws from its seeded generator at every decision: identical only if its seed is too.
RANDOM_BOT = """
from bots_sdk import Bot, highest


class Dice(Bot):
    def pass_cards(self, view):
        return self.rng.sample(list(view.hand), view.rules.pass_count)

    def play(self, view):
        choice = self.rng.choice(list(view.legal))
        if CHANGED and len(view.hand) == 9:
            return highest(list(view.legal))
        return choice
"""
SEAT = 1


@pytest.fixture
def sandboxed() -> None:
    problem = sandbox_problem()
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")


def _bots(tmp_path: Path) -> tuple[Path, Path]:
    played, changed = tmp_path / "dice.py", tmp_path / "dice_changed.py"
    played.write_text("CHANGED = False\n" + RANDOM_BOT)
    changed.write_text("CHANGED = True\n" + RANDOM_BOT)
    return played, changed


def _record(bot: Path, seed: int = 11, hands: int = 2) -> dict:
    result = run_match(
        "standard",
        seed,
        ["heuristic", str(bot), "random", "low"],
        hands=hands,
        time_control=TimeControl(5, 60),
    )
    assert result.games[0].seats[SEAT].faults == []
    return result.to_dict()


def _first_departure(game: dict) -> tuple[int, int, str, str]:
    """(hand, trick, recorded, highest legal) of the first play of SEAT holding 9 cards
    where the record's card is not the highest legal one: where the changed bot departs."""
    state = GameState(RuleSet.from_spec(game["rules"]), game["seed"])
    for number, hand in enumerate(game["hands"]):
        if number:
            state.next_hand()
        for seat, cards in enumerate(hand["passes"]):
            for card in cards:
                state.apply(card, seat=seat)
        for index, card in enumerate(hand["plays"]):
            assert state.phase is Phase.PLAY
            if state.current == SEAT and len(state.observation(SEAT).hand) == 9:
                top = highest(state.legal_actions())
                if card != top:
                    return number, index // 4, card, top
            state.apply(card)
    raise AssertionError("the changed bot never departs in this record: pick another seed")


def test_the_code_that_played_answers_every_decision_as_recorded(
    sandboxed: None, tmp_path: Path
) -> None:
    played, _ = _bots(tmp_path)
    record = _record(played)
    again = reproduce(record, seat=SEAT, bot=played)
    assert again.identical and again.difference is None
    assert again.decisions == 2 * (1 + 13)  # a pass and 13 plays in each of the two hands
    assert again.describe() == "identical: 28 decisions"


def test_a_changed_bot_is_stopped_where_it_first_departs(sandboxed: None, tmp_path: Path) -> None:
    played, changed = _bots(tmp_path)
    record = _record(played)
    hand, trick, recorded, top = _first_departure(record["games"][0])
    again = reproduce(record, seat=SEAT, bot=changed)
    assert not again.identical
    difference = again.difference
    assert difference is not None
    assert (difference.hand, difference.trick, difference.seat) == (hand, trick, SEAT)
    assert (difference.recorded, difference.now, difference.decision) == (recorded, top, "play")
    # every decision before it was the same: a pass and the plays of the tricks before
    assert again.decisions == hand * 14 + 1 + trick
    assert again.describe().endswith(
        f"hand {hand + 1}, trick {trick + 1}, seat {SEAT + 1} (play): the record holds "
        f"{recorded}; the bot now plays {top}"
    )


def test_a_built_in_seat_reproduces_and_a_record_of_nothing_is_refused() -> None:
    record = run_match("standard", 5, ["low", "random", "heuristic", "low"], hands=1).to_dict()
    assert reproduce(record, seat=2, bot="heuristic").identical
    assert not reproduce(record, seat=2, bot="low").identical
    with pytest.raises(RecordError, match="no 'hands'"):
        reproduce({"rules": "standard"}, seat=0, bot="low")
    with pytest.raises(RecordError, match="there is no seat 5"):
        reproduce(record, seat=4, bot="low")


#: Plays by its clock: the lowest card while it has time, the highest when it has none.
CLOCKED_BOT = """
from bots_sdk import Bot, highest, lowest


class Clocked(Bot):
    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])

    def play(self, view):
        if view.time_left is not None and view.time_left > 30:
            return lowest(list(view.legal))
        return highest(list(view.legal))
"""


def test_a_bot_that_reads_its_clock_is_offered_the_clock_it_had(
    sandboxed: None, tmp_path: Path
) -> None:
    bot = tmp_path / "clocked.py"
    bot.write_text(CLOCKED_BOT)
    record = _record(bot)
    steps = record["games"][0]["seats"][SEAT]["decisions"]
    assert all(step["offered_ms"] > 30_000 for step in steps)  # (move 5 s + bank 60 s)
    assert reproduce(record, seat=SEAT, bot=bot).describe() == "identical: 28 decisions"
    for step in steps:  # a record without the clock: its views show none, and it departs
        del step["offered_ms"]
    assert not reproduce(record, seat=SEAT, bot=bot).identical


#: Plays well for two hands, then raises at its first play of the third: a bot that passes
#: `bidel check` and the platform's validation, and faults in every game it plays on.
CRASHER = """from bots_sdk import Bot, lowest


class Crasher(Bot):
    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])

    def play(self, view):
        if view.hand_number >= 2:
            raise ValueError(f"no plan for hand {view.hand_number + 1}")
        return lowest(list(view.legal))
"""
#: The line of CRASHER that raises (from 1, as a traceback counts).
RAISES_AT = (
    CRASHER.splitlines().index(
        '            raise ValueError(f"no plan for hand {view.hand_number + 1}")'
    )
    + 1
)
#: Every decision of the crasher's seat before it raised: a pass and 13 plays in each of the
#: first two hands (the third hand holds, rotated by the cycle, no pass: the fault is at its
#: first play).
BEFORE_THE_CRASH = 2 * (1 + 13)


def _crash_record(tmp_path: Path, *, unsafe: bool = False) -> tuple[Path, dict]:
    """The crasher's match record (``unsafe``: its bot run without a sandbox, for a machine
    without one; the record is the same, a game being a function of its rules, seed and
    decisions)."""
    bot = tmp_path / "crasher.py"
    bot.write_text(CRASHER)
    rules = RuleSet.from_preset("standard", pass_cycle=["left", "right", "hold"])
    config = RefereeConfig(hands=4, time_control=TimeControl(5, 60), unsafe=unsafe)
    result = run_match(rules, 3, ["heuristic", str(bot), "random", "low"], config=config)
    seat = result.games[0].seats[SEAT]
    assert seat.replaced and [f["class"] for f in seat.faults] == ["crash"], seat.faults
    assert (seat.faults[0]["hand"], seat.faults[0]["decision"]) == (2, "play")
    return bot, result.to_dict()


def test_a_crash_in_the_sandbox_is_the_match_again_with_the_bots_own_traceback(
    sandboxed: None, tmp_path: Path
) -> None:
    bot, record = _crash_record(tmp_path)
    again = reproduce(record, seat=SEAT, bot=bot)
    assert again.identical and again.faulted and again.difference is None
    assert again.decisions == BEFORE_THE_CRASH
    (fault,) = again.again
    assert (fault.hand, fault.decision, fault.seat) == (2, "play", SEAT)
    assert fault.fault == "crash: ValueError: no plan for hand 3"
    assert "the bot faults again as in the match: hand 3, trick" in again.describe()
    frames = own_frames(again.stderr)
    assert frames[-1] == "ValueError: no plan for hand 3"
    assert last_frame(frames).endswith(f"crasher.py, line {RAISES_AT}"), frames


def test_a_crash_run_here_is_raised_from_the_bots_own_file_and_line(tmp_path: Path) -> None:
    bot, record = _crash_record(tmp_path, unsafe=True)
    with pytest.raises(BotRaised) as raised:
        reproduce(record, seat=SEAT, bot=bot, here=True)
    error = raised.value.error
    assert type(error) is ValueError and str(error) == "no plan for hand 3"
    innermost = traceback.extract_tb(error.__traceback__)[-1]
    assert (Path(innermost.filename), innermost.lineno) == (bot, RAISES_AT)
    where = raised.value.where
    assert (where.hand, where.decision, where.recorded_fault) == (
        2,
        "play",
        "crash: ValueError: no plan for hand 3",
    )
    assert own_traceback(error)[-2:] == [
        '    raise ValueError(f"no plan for hand {view.hand_number + 1}")',
        "ValueError: no plan for hand 3",
    ]


def test_a_fixed_bot_answers_where_the_record_faulted_and_is_told_so(tmp_path: Path) -> None:
    bot, record = _crash_record(tmp_path, unsafe=True)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(CRASHER.replace("view.hand_number >= 2", "False"))
    again = reproduce(record, seat=SEAT, bot=fixed, here=True)
    assert not again.identical and not again.faulted
    assert again.decisions == BEFORE_THE_CRASH
    difference = again.difference
    assert difference is not None and difference.hand == 2 and difference.now
    assert (
        "the record's seat faulted here (crash: ValueError: no plan for hand 3); the bot now plays"
        in again.describe()
    )


#: Plays a card it does not hold at its third play of each hand: an illegal fault, and the
#: seat plays on (the fallback plays that one card for it).
CHEAT = """from bots_sdk import Bot, lowest


class Cheat(Bot):
    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])

    def play(self, view):
        if len(view.hand) == 11:
            return next(c for c in ("AS", "KS", "QS", "AH") if c not in view.hand)
        return lowest(list(view.legal))
"""


def test_an_illegal_card_is_played_again_where_it_was_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    bot = tmp_path / "cheat.py"
    bot.write_text(CHEAT)
    result = run_match(
        "standard",
        4,
        ["heuristic", str(bot), "random", "low"],
        config=RefereeConfig(hands=2, time_control=TimeControl(5, 60), unsafe=True),
    )
    seat = result.games[0].seats[SEAT]
    assert [f["class"] for f in seat.faults] == ["illegal", "illegal"] and not seat.replaced
    for here in (True, False):
        again = reproduce(result.to_dict(), seat=SEAT, bot=bot, here=here, unsafe=True)
        assert again.identical and again.faulted, again.describe()
        assert [(f.hand, f.decision) for f in again.again] == [(0, "play"), (1, "play")]
        assert all(f.fault.startswith("illegal: ") for f in again.again)
        assert again.decisions == 2 * (1 + 12)  # every decision but the two illegal plays


#: Never answers its first play of the second hand: the referee's clock stops it.
STUCK = """import time

from bots_sdk import Bot, lowest


class Stuck(Bot):
    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])

    def play(self, view):
        while view.hand_number == 1:
            time.sleep(0.05)
        return lowest(list(view.legal))
"""


def test_a_bot_that_never_answered_is_stopped_again_not_waited_on(tmp_path: Path) -> None:
    bot = tmp_path / "stuck.py"
    bot.write_text(STUCK)
    result = run_match(
        "standard",
        6,
        ["heuristic", str(bot), "random", "low"],
        # (a move clock its other decisions, a lowest card each, meet on any machine)
        config=RefereeConfig(hands=2, time_control=TimeControl(2.0, 0.0), unsafe=True),
    )
    seat = result.games[0].seats[SEAT]
    assert [(f["class"], f["hand"]) for f in seat.faults][:1] == [("timeout", 1)], seat.faults
    again = reproduce(result.to_dict(), seat=SEAT, bot=bot, unsafe=True)
    assert again.identical and again.faulted, again.describe()
    assert again.again[0].fault.startswith("timeout: "), again.describe()
    assert (again.again[0].hand, again.again[0].decision) == (1, "play")
