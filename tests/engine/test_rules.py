"""RuleSet: presets, the player-count table, overrides, and clear rejections."""

from __future__ import annotations

from typing import Any

import pytest

from engine.rules import PRESETS, RulesError, RuleSet, allowed_player_counts

REQUIRED_PRESETS = {
    "standard",
    "persian",
    "black_lady_54",
    "black_lady_40",
    "hokm_40",
    "omnibus",
    "kitty",
    "no_broken",
    "moon_subtract",
    "moon_choice",
    "cancellation",
}


def test_every_required_preset_exists() -> None:
    assert REQUIRED_PRESETS <= set(PRESETS)


def test_standard_is_seed_003() -> None:
    rules = RuleSet.from_preset("standard")
    assert rules.pass_cycle == ("left", "right", "across", "hold")
    assert rules.hearts_break == "heart_or_queen"
    assert (rules.target, rules.tie_break, rules.moon, rules.moon_amount) == (
        100,
        "extra_hand",
        "add",
        26,
    )
    assert rules.total_points == 26 and rules.hand_size == 13 and rules.removed == ()


def test_persian_passes_right_first_and_only_a_heart_breaks_hearts() -> None:
    rules = RuleSet.from_preset("persian")
    assert rules.pass_cycle == ("right", "left", "across", "hold")
    assert rules.hearts_break == "heart"
    # Counterclockwise (RULES.md §7): the player on the right is the next one in play order.
    assert rules.direction == "counterclockwise"
    assert [rules.pass_offset(k) for k in range(4)] == [1, 3, 2, 0]


def test_standard_plays_clockwise_left_is_the_next_seat() -> None:
    rules = RuleSet.from_preset("standard")
    assert rules.direction == "clockwise"
    assert [rules.pass_offset(k) for k in range(4)] == [1, 3, 2, 0]
    assert (rules.side_offset("left"), rules.side_offset("right")) == (1, 3)


@pytest.mark.parametrize("preset", ["persian", "black_lady_54", "black_lady_40", "hokm_40"])
def test_the_seed_001_presets_play_counterclockwise(preset: str) -> None:
    for players in allowed_player_counts(preset):
        rules = RuleSet.from_preset(preset, players=players)
        assert rules.direction == "counterclockwise"
        assert (rules.side_offset("left"), rules.side_offset("right")) == (players - 1, 1)
        # The first pass, "right", goes to the next player (5-7 players: seed 003's table,
        # left then right, named for this direction).
        assert rules.pass_cycle[0] == "right" and rules.pass_offset(0) == 1


@pytest.mark.parametrize(
    "preset",
    ["standard", "omnibus", "kitty", "no_broken", "moon_subtract", "moon_choice", "cancellation"],
)
def test_the_seed_003_presets_play_clockwise(preset: str) -> None:
    assert RuleSet.from_preset(preset).direction == "clockwise"


@pytest.mark.parametrize(
    ("spec", "offsets"),
    [
        ({"preset": "persian", "direction": "clockwise"}, [3, 1, 2, 0]),
        ({"preset": "standard", "direction": "counterclockwise"}, [3, 1, 2, 0]),
        ({"preset": "persian", "players": 3}, [1, 2, 0]),
        ({"preset": "persian", "players": 3, "direction": "clockwise"}, [2, 1, 0]),
        ({"preset": "standard", "players": 6, "pass_cycle": ["across"]}, [3]),
    ],
)
def test_the_direction_decides_which_seat_left_and_right_name(spec: dict, offsets: list) -> None:
    rules = RuleSet.from_spec(spec)
    assert [rules.pass_offset(k) for k in range(len(offsets))] == offsets


def test_point_presets_of_seed_001() -> None:
    b54 = RuleSet.from_preset("black_lady_54")
    assert b54.heart_points[-4:] == (2, 3, 4, 10) and b54.queen_points == 17
    assert b54.total_points == 45  # the text says 54; its listed values add up to 45
    assert (b54.target, b54.moon_amount) == (500, 26)
    b40 = RuleSet.from_preset("black_lady_40")
    assert b40.total_points == 40 and b40.heart_points[-1] == 11
    hokm = RuleSet.from_preset("hokm_40")
    assert hokm.hokm and hokm.total_points == 40
    for rules in (b54, b40, hokm):
        assert rules.pass_cycle[0] == "right" and rules.hearts_break == "heart"
        assert rules.no_points_first_trick


def test_variants_of_seed_003() -> None:
    assert RuleSet.from_preset("omnibus").jd_bonus == -10
    assert RuleSet.from_preset("no_broken").hearts_break == "no_broken"
    assert RuleSet.from_preset("moon_subtract").moon == "subtract"
    assert RuleSet.from_preset("moon_choice").moon == "choice"
    kitty = RuleSet.from_preset("kitty")
    assert (kitty.kitty, kitty.hand_size, kitty.kitty_taker) == (4, 12, "first_points_trick")
    cancellation = RuleSet.from_preset("cancellation")
    assert cancellation.cancellation and cancellation.target == 150
    assert cancellation.deck_size == 104 and cancellation.total_points == 52


@pytest.mark.parametrize(
    ("players", "removed", "hand_size", "cycle"),
    [
        (3, ("2D",), 17, ("left", "right")),
        (4, (), 13, ("left", "right", "across", "hold")),
        (5, ("2C", "2D"), 10, ("left", "right")),
        (6, ("2D", "3C", "3D", "4C"), 8, ("left", "right")),
        (7, ("2D", "3C", "3D"), 7, ("left", "right")),
    ],
)
def test_players_applies_the_removal_table(
    players: int, removed: tuple, hand_size: int, cycle: tuple
) -> None:
    rules = RuleSet.from_preset("standard", players=players)
    assert (rules.removed, rules.hand_size, rules.pass_cycle) == (removed, hand_size, cycle)


def test_three_player_persian_passes_right_left_hold() -> None:
    rules = RuleSet.from_preset("persian", players=3)
    assert rules.pass_cycle == ("right", "left", "hold")
    assert rules.direction == "counterclockwise"


@pytest.mark.parametrize(("players", "kitty"), [(3, 1), (4, 4), (5, 2), (6, 4), (7, 3)])
def test_kitty_variant_keeps_the_deck_and_sets_cards_aside(players: int, kitty: int) -> None:
    rules = RuleSet.from_preset("kitty", players=players)
    assert rules.removed == () and rules.kitty == kitty
    assert rules.hand_size * players + kitty == 52


@pytest.mark.parametrize("players", range(6, 12))
def test_cancellation_deals_two_decks_evenly(players: int) -> None:
    rules = RuleSet.from_preset("cancellation", players=players)
    assert rules.hand_size * players + rules.kitty == 104
    assert rules.kitty == 104 % players


def test_explicit_overrides_beat_the_table() -> None:
    rules = RuleSet.from_preset(
        "standard", players=3, removed=["2S"], pass_cycle=["right", "left", "hold"]
    )
    assert rules.removed == ("2S",) and rules.pass_cycle == ("right", "left", "hold")


@pytest.mark.parametrize(
    ("preset", "overrides", "message"),
    [
        ("standard", {"players": 8}, "8 players need cancellation"),
        ("standard", {"players": 2}, "Hearts needs 3 to 7 players, not 2"),
        ("cancellation", {"players": 5}, "cancellation is played by 6 to 11 players, not 5"),
        ("standard", {"players": 3, "pass_cycle": ["across"]}, "nobody sits across with 3 players"),
        ("standard", {"kitty": 3}, "do not divide among 4 players"),
        ("standard", {"pass_count": 13}, "pass_count 13 must be less than the 13 cards dealt"),
        ("standard", {"heart_points": [1, 2]}, "heart_points must list 13 integers"),
        ("standard", {"moon": "sideways"}, "moon must be one of add, subtract, choice, off"),
        ("standard", {"tie_break": "coin"}, "tie_break must be one of"),
        ("standard", {"removed": ["ZZ"]}, "removed: 'ZZ' is not a card"),
        ("standard", {"target": 0}, "target must be at least 1"),
        (
            "standard",
            {"direction": "anticlockwise"},
            "direction must be one of clockwise, counterclockwise; got 'anticlockwise'",
        ),
        ("persian", {"direction": "left"}, "direction must be one of clockwise, counterclockwise"),
        ("standard", {"direction": None}, "direction must be one of clockwise, counterclockwise"),
        ("standard", {"colour": "red"}, "unknown setting 'colour'"),
        ("nonsense", {}, "unknown preset 'nonsense'"),
    ],
)
def test_inconsistent_settings_are_rejected_clearly(
    preset: str, overrides: dict, message: str
) -> None:
    with pytest.raises(RulesError, match=message):
        RuleSet.from_preset(preset, **overrides)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_spec_round_trips_for_every_preset_and_player_count(preset: str) -> None:
    for players in allowed_player_counts(preset):
        rules = RuleSet.from_preset(preset, players=players)
        assert RuleSet.from_spec(rules.to_spec()) == rules
    tweaked = RuleSet.from_preset(preset, target=321)
    assert tweaked.to_spec() == {"preset": preset, "target": 321}
    assert RuleSet.from_spec(tweaked.to_spec()) == tweaked


@pytest.mark.parametrize(
    ("spec", "written"),
    [
        ("persian", "persian"),  # the preset's own direction is not repeated
        ({"preset": "persian", "direction": "counterclockwise"}, "persian"),
        (
            {"preset": "persian", "direction": "clockwise"},
            {"preset": "persian", "direction": "clockwise"},
        ),
        (
            {"preset": "standard", "direction": "counterclockwise"},
            {"preset": "standard", "direction": "counterclockwise"},
        ),
        (
            {"preset": "hokm_40", "players": 5, "direction": "clockwise"},
            {"preset": "hokm_40", "players": 5, "direction": "clockwise"},
        ),
    ],
)
def test_direction_round_trips_through_the_spec(spec: Any, written: Any) -> None:
    rules = RuleSet.from_spec(spec)
    assert rules.to_spec() == written
    assert RuleSet.from_spec(rules.to_spec()) == rules
    assert rules.to_dict()["direction"] == rules.direction


def test_rule_sets_are_frozen_and_hashable() -> None:
    rules = RuleSet.from_preset("standard")
    with pytest.raises(AttributeError):
        rules.target = 50  # type: ignore[misc]
    assert hash(rules) == hash(RuleSet.from_preset("standard"))


def test_cancellation_leftovers_go_to_the_first_heart_trick() -> None:
    assert RuleSet.from_preset("cancellation", players=9).kitty_taker == "first_heart_trick"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_changing_the_player_count_keeps_every_setting_chosen(preset: str) -> None:
    from engine.rules import allowed_player_counts

    chosen = RuleSet.from_spec({"preset": preset, "target": 57, "jd_bonus": -7})
    for players in allowed_player_counts(preset):
        moved = chosen.with_players(players)
        assert (moved.players, moved.target, moved.jd_bonus) == (players, 57, -7)
        assert moved.direction == chosen.direction
        # what the count decides comes from its table, as for the preset itself
        table = RuleSet.from_preset(preset, players=players)
        assert (moved.removed, moved.kitty) == (table.removed, table.kitty)
        assert RuleSet.from_spec(moved.to_spec()) == moved  # and it round-trips


@pytest.mark.parametrize(
    ("preset", "flipped"), [("standard", "counterclockwise"), ("persian", "clockwise")]
)
def test_changing_the_player_count_keeps_a_chosen_direction(preset: str, flipped: str) -> None:
    chosen = RuleSet.from_spec({"preset": preset, "direction": flipped})
    for players in allowed_player_counts(preset):
        moved = chosen.with_players(players)
        count = {} if players == 4 else {"players": players}
        assert moved.direction == flipped
        assert moved.to_spec() == {"preset": preset, **count, "direction": flipped}


def test_the_engine_command_keeps_the_settings_when_the_players_change() -> None:
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "random",
            "--players",
            "5",
            "--seed",
            "3",
            "--rules",
            '{"preset": "standard", "target": 50}',
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["rules"] == {"preset": "standard", "players": 5, "target": 50}
