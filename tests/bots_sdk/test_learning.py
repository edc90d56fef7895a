"""bots_sdk.learning (the PettingZoo and Gymnasium environments) and the learned example bot
of examples/learned: the libraries' own conformance checks, seeds, masks, hidden
information, and the bot's strength."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the learning extra: pip install 'bidel-sdk[learn]'")
pytest.importorskip("gymnasium", reason="the learning extra: pip install 'bidel-sdk[learn]'")
# The checkers' advice for plain Box observations: a dict with an action mask is the
# documented PettingZoo form for card games.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation.*:UserWarning"),
    pytest.mark.filterwarnings("ignore:.*alternative render modes.*:UserWarning"),
]

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

from bots_sdk import Bot, View  # noqa: E402
from bots_sdk.learning import (  # noqa: E402
    ACTIONS,
    HeartsEnv,
    SeatEnv,
    action_of,
    encode,
    observation_layout,
    text_of,
)
from bots_sdk.loader import load_bot_class  # noqa: E402
from bots_sdk.referee.runner import run_match  # noqa: E402
from bots_sdk.referee.stats import summarize  # noqa: E402
from engine.rules import PRESETS, RuleSet, allowed_player_counts  # noqa: E402
from engine.state import GameState, IllegalMoveError, Phase  # noqa: E402
from tests.support import PROJECT_DIR  # noqa: E402

EXAMPLE = PROJECT_DIR / "examples" / "learned" / "bot.py"
#: Rules covering every kind of decision: passing (3 to 8 seats), Hokm's trump, the moon
#: choice, the kitty, Omnibus' jack, redeals, Cancellation's double deck.
RULES: list[Any] = [
    "standard",
    "hokm_40",
    "moon_choice",
    "kitty",
    "persian",
    "cancellation",
    {"preset": "standard", "players": 3},
    {"preset": "omnibus", "players": 7},
    {"preset": "hokm_40", "players": 5},
]


def _masked(observation: dict[str, Any], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


@pytest.mark.parametrize("rules", RULES, ids=str)
def test_hearts_env_passes_pettingzoo_api_and_seed_tests(rules: Any) -> None:
    api_test(HeartsEnv(rules), num_cycles=300)
    api_test(HeartsEnv(rules, episode="game", reward="relative"), num_cycles=300)
    seed_test(lambda: HeartsEnv(rules), num_cycles=300)


@pytest.mark.parametrize("rules", ["standard", "hokm_40", "moon_choice", "cancellation"])
def test_seat_env_passes_gymnasium_check_env(rules: str) -> None:
    check_env(SeatEnv(rules), skip_render_check=False)
    check_env(SeatEnv(rules, opponents="heuristic", seat=2, episode="game"))


def test_actions_round_trip_through_texts() -> None:
    texts = [text_of(a) for a in range(ACTIONS)]
    assert len(set(texts)) == ACTIONS
    assert [action_of(t) for t in texts] == list(range(ACTIONS))
    assert texts[:13] == [rank + "C" for rank in "23456789TJQKA"]
    with pytest.raises(ValueError, match="not a card, a suit or a moon choice"):
        action_of("ZZ")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_masks_are_the_engines_legal_actions_and_rewards_add_up_to_the_scores(
    preset: str,
) -> None:
    for players in allowed_player_counts(preset)[::2]:
        env = HeartsEnv({"preset": preset, "players": players}, episode="game")
        env.reset(seed=players)
        rng = np.random.default_rng(players)
        collected = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, reward, terminated, _, _ = env.last()
            collected[agent] += reward
            if terminated:
                env.step(None)
                continue
            mask = observation["action_mask"]
            assert mask.dtype == np.int8
            legal = env.game.legal_actions()
            assert sorted(text_of(int(a)) for a in np.flatnonzero(mask)) == sorted(legal)
            assert env.game.current_seat == int(agent.removeprefix("player_"))
            env.step(_masked(observation, rng))
        assert env.game.phase is Phase.GAME_OVER
        assert [collected[a] for a in env.possible_agents] == [-t for t in env.game.totals]


def test_a_hand_episode_pays_minus_the_hand_score() -> None:
    env = SeatEnv("omnibus", opponents=["low", "random", "heuristic"], seat=1)
    observation, _ = env.reset(seed=11)
    rng = np.random.default_rng(0)
    paid, done = 0.0, False
    while not done:
        observation, reward, done, truncated, info = env.step(_masked(observation, rng))
        paid += reward
        assert not truncated and info == {}
    assert paid == -env.game.history[-1].scores[1]
    assert env.game.phase is Phase.HAND_OVER and len(env.game.history) == 1


def test_reset_with_a_seed_deals_that_game_and_replays_exactly() -> None:
    rules = RuleSet.from_preset("hokm_40")
    env = HeartsEnv(rules)
    env.reset(seed=42)
    dealt = GameState(rules, seed=42)
    assert [env.game.hand_of(s) for s in range(4)] == [dealt.hand_of(s) for s in range(4)]

    def trajectory(seed: int) -> list[Any]:
        env = SeatEnv("standard", opponents="random", seat=3)
        observation, _ = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps: list[Any] = [observation["observation"].tobytes()]
        done = False
        while not done:
            observation, reward, done, _, _ = env.step(_masked(observation, rng))
            steps.append((observation["observation"].tobytes(), reward))
        observation, _ = env.reset()  # the next game's seed comes from the seeded stream
        return [*steps, observation["observation"].tobytes()]

    assert trajectory(5) == trajectory(5)
    assert trajectory(5) != trajectory(6)
    # never seeded: as if seeded with 0
    first = SeatEnv("standard").reset()[0]["observation"]
    assert np.array_equal(first, SeatEnv("standard").reset(seed=0)[0]["observation"])


def test_illegal_actions_fall_back_or_raise() -> None:
    env = SeatEnv("standard", opponents="low")
    env.reset(seed=1)  # seat 0 holds 2C, not QS, and must pass first
    observation, _, _, _, info = env.step(action_of("QS"))
    assert info == {"illegal": True}
    assert env.view().passed == ["2C"]  # the referee's fallback: the lowest card
    strict = HeartsEnv("standard", illegal="raise")
    strict.reset(seed=1)
    with pytest.raises(IllegalMoveError, match="cannot pass QS: not in hand"):
        strict.step(action_of("QS"))
    with pytest.raises(ValueError, match="an action is an integer"):
        strict.step(ACTIONS)
    assert strict.game.observation(0).passed == []


def test_bad_options_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="episode must be one of 'hand', 'game'; got 'set'"):
        HeartsEnv(episode="set")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="4 seats need 3 opponents, not 2"):
        SeatEnv(opponents=["low", "low"])
    with pytest.raises(ValueError, match=r"seat must be 0\.\.3, not 4"):
        SeatEnv(seat=4)


def _swapped(rules: RuleSet, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """A deal, and the same deal with two cards of one suit swapped between seats 1 and 2
    (neither the two of clubs: the same seat leads in both)."""
    hands = [GameState(rules, seed=seed).hand_of(s) for s in range(rules.players)]
    for suit in "DSH":
        ones = [c for c in hands[1] if c[1] == suit]
        twos = [c for c in hands[2] if c[1] == suit]
        if ones and twos:
            other = [list(h) for h in hands]
            other[1] = sorted(c for c in hands[1] if c != ones[0]) + [twos[0]]
            other[2] = sorted(c for c in hands[2] if c != twos[0]) + [ones[0]]
            return hands, [sorted(h) for h in other]
    raise AssertionError("no suit to swap in this deal")


@pytest.mark.parametrize("seed", range(4))
def test_observations_never_show_other_seats_hidden_cards(seed: int) -> None:
    rules = RuleSet.from_preset("standard")
    hands, other = _swapped(rules, seed)
    moved = set(hands[1]) ^ set(other[1])
    a = GameState.at_play(rules, hands)
    b = GameState.at_play(rules, other)
    rng = random.Random(seed)
    for _ in range(10):  # the same plays in both, never one of the swapped cards
        choices = [c for c in a.legal_actions() if c not in moved and c in b.legal_actions()]
        if not choices:
            break
        card = rng.choice(choices)
        a.apply(card)
        b.apply(card)
    for seat in (0, 3):
        assert np.array_equal(
            encode(View.from_observation(a.observation(seat))),
            encode(View.from_observation(b.observation(seat))),
        )
    # (the seats that hold the swapped cards do see the difference)
    assert not np.array_equal(
        encode(View.from_observation(a.observation(1))),
        encode(View.from_observation(b.observation(1))),
    )


def test_a_hidden_kitty_is_not_observed_until_the_hand_is_over() -> None:
    env = HeartsEnv("kitty", illegal="raise")
    env.reset(seed=3)
    layout = dict(observation_layout(env.rules))
    start = sum(size for name, size in observation_layout(env.rules)[:5])
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        observation, _, terminated, _, _ = env.last()
        kitty = observation["observation"][start : start + layout["kitty"]]
        if terminated:
            assert kitty.sum() == 4  # shown once the hand is scored
            env.step(None)
            continue
        assert kitty.sum() == 0
        view = env.view(agent)
        assert sum(view.points_taken) <= sum(env.game.points_taken())
        env.step(_masked(observation, rng))


@pytest.mark.parametrize(
    ("spec", "slots"),
    [
        ("standard", [0, 1, 2, 3]),  # left (next), right (previous), across, hold
        ("persian", [0, 1, 2, 3]),  # right is the next seat counterclockwise
        ({"preset": "persian", "direction": "clockwise"}, [1, 0, 2, 3]),
        ({"preset": "persian", "players": 3}, [0, 1, 3]),
    ],
)
def test_the_pass_is_observed_by_where_it_goes_in_play_order(spec: Any, slots: list) -> None:
    rules = RuleSet.from_spec(spec)
    layout = observation_layout(rules)
    start = sum(size for name, size in layout[: [n for n, _ in layout].index("pass_direction")])
    deal = GameState(rules, seed=4)
    hands = [deal.hand_of(seat) for seat in range(rules.players)]
    for number, slot in enumerate(slots):
        state = GameState.at_play(rules, hands, hand_number=number)
        block = encode(View.from_observation(state.observation(1)))[start : start + 4]
        assert list(block) == [1.0 if i == slot else 0.0 for i in range(4)], number


def test_the_extra_missing_gives_a_clear_message() -> None:
    code = "import sys\nsys.modules['pettingzoo'] = None\nimport bots_sdk.learning\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert (
        "ImportError: bots_sdk.learning needs the learning extra: pip install 'bidel-sdk[learn]'"
        in done.stderr
    )


# --- the learned example ---------------------------------------------------------------------


def test_the_example_bot_uses_numpy_and_the_sdk_only() -> None:
    source = EXAMPLE.read_text()
    assert "pettingzoo" not in source and "gymnasium" not in source
    assert (EXAMPLE.parent / "weights.npz").stat().st_size < 100_000


@pytest.mark.parametrize("rules", RULES, ids=str)
def test_the_example_bot_plays_legally_under_every_kind_of_rules(rules: Any) -> None:
    cls = load_bot_class(EXAMPLE)
    assert issubclass(cls, Bot) and cls.__name__ == "LearnedBot"
    ruleset = RuleSet.from_spec(rules)
    bots = [cls(seed=s) for s in range(ruleset.players)]
    state = GameState(ruleset, seed=7)
    while state.phase is not Phase.HAND_OVER:
        seat = state.current_seat
        assert seat is not None
        view = View.from_observation(state.observation(seat))
        bot = bots[seat]
        if view.decision == "pass":
            for card in bot.pass_cards(view):
                state.apply(card, seat)
        elif view.decision == "play":
            state.apply(bot.play(view), seat)
        elif view.decision == "trump":
            state.apply(bot.declare_trump(view), seat)
        else:
            state.apply(bot.choose_moon(view), seat)
        if state.phase is Phase.HAND_OVER and state.history[-1].void:
            state.next_hand()
    assert sum(state.history[-1].points) == ruleset.total_points


def test_the_example_bot_plays_a_match_without_a_fault() -> None:
    result = run_match(
        "standard", 3, [str(EXAMPLE), "random", "low", "heuristic"], hands=2, unsafe=True
    )
    seats = [seat for game in result.games for seat in game.seats]
    assert [s.faults for s in seats if s.bot == str(EXAMPLE)] == [[]]
    assert len(result.games[0].state.history) == 2


def test_the_example_bot_beats_random_in_duplicate() -> None:
    bot = str(EXAMPLE)
    result = run_match(
        "standard",
        2024,
        [bot, "random", "random", "random"],
        hands=30,
        duplicate=True,
        unsafe=True,
    )
    summary = summarize(result)
    assert all(sum(b["faults"].values()) == 0 for b in summary["bots"])
    pair = summary["comparisons"][0]
    assert (pair["a"], pair["b"], pair["deals"]) == (bot, "random", 30)
    low, high = pair["ci95"]
    assert high < 0, pair  # fewer points than random, the whole interval below zero


def test_training_is_deterministic_and_learns() -> None:
    path, modules = sys.path[:], set(sys.modules)
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import train  # examples/learned/train.py

        first = train.train(96, seed=3, report=0)
        again = train.train(96, seed=3, report=0)
        other = train.train(96, seed=4, report=0)
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            del sys.modules[name]
    for kind in ("play", "pass"):
        assert np.array_equal(first[kind], again[kind])
        assert np.any(first[kind] != 0)
    assert not np.array_equal(first["play"], other["play"])


def test_the_guides_python_examples_run() -> None:
    guide = (PROJECT_DIR / "docs" / "learning.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.S)
    assert len(blocks) == 3
    for block in blocks[:2]:
        scope: dict[str, Any] = {}
        exec(compile(block, "docs/learning.md", "exec"), scope)
        assert "env" in scope
    # the bot built on bots_sdk.observation: it plays a legal card with any weights
    from bots_sdk.observation import ACTIONS, observation_size

    rules = RuleSet.from_preset("standard")
    weights = np.random.default_rng(0).normal(size=(observation_size(rules), ACTIONS))
    scope = {"WEIGHTS": weights}
    exec(compile(blocks[2], "docs/learning.md", "exec"), scope)
    state = GameState(rules, seed=2)
    while state.phase != Phase.PLAY:
        state.apply(state.legal_actions()[0])
    seat = state.current_seat
    assert seat is not None
    view = View.from_observation(state.observation(seat))
    assert scope["Policy"](seed=0).play(view) in view.legal
