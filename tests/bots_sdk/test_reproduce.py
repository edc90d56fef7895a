"""A recorded game played again around one seat (bots_sdk.reproduce): the code that played
answers every decision as recorded, and a changed bot is stopped at the very decision where
it first departs — found here independently, by walking the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots_sdk import highest
from bots_sdk.referee.runner import TimeControl, run_match
from bots_sdk.reproduce import RecordError, reproduce
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
