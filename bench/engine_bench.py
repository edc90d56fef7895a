"""Random playouts of whole hands (deal, pass, 52 plays): our engine vs OpenSpiel's Hearts.

    .venv/bin/python bench/engine_bench.py [--hands 2000] [--rounds 7]
    BIDEL_ENGINE=pure .venv/bin/python bench/engine_bench.py   # the pure-Python build

Both engines are driven from Python the same way: at every decision, take the legal actions,
pick one uniformly at random, apply it. OpenSpiel deals through chance nodes (52 cards and the
pass direction), sampled from `legal_actions()` (its fastest Python route) and, for reference,
from `chance_outcomes()`; our engine deals from the seed. Also printed: OpenSpiel's all-C++
`evaluate_bots` (the stretch mark), and clone + rollout from the middle of a hand, which is
what a Monte-Carlo bot does thousands of times per move. The contenders take turns, round
after round, and each reports its median round: a machine whose speed drifts slows all alike.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.cards import indices  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from engine.state import GameState, Phase  # noqa: E402

RULES = RuleSet.from_preset("standard")
_OVER = (Phase.HAND_OVER, Phase.GAME_OVER)


def ours_text_api(hands: int, rng: random.Random) -> None:
    for seed in range(hands):
        state = GameState(RULES, seed=seed)
        while state.phase not in _OVER:
            state.apply(rng.choice(state.legal_actions()))


def ours_index_api(hands: int, rng: random.Random) -> None:
    for seed in range(hands):
        state = GameState(RULES, seed=seed)
        while state.phase not in _OVER:
            state.apply_index(rng.choice(indices(state.legal_mask())))


def ours_rollout(hands: int, rng: random.Random) -> None:
    for seed in range(hands):
        GameState(RULES, seed=seed).play_random(rng)


def openspiel_loops() -> dict[str, Callable[[int, random.Random], None]]:
    import pyspiel

    game = pyspiel.load_game("hearts")

    def via_legal_actions(hands: int, rng: random.Random) -> None:
        for _ in range(hands):
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))

    def via_chance_outcomes(hands: int, rng: random.Random) -> None:
        for _ in range(hands):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))

    def cxx_evaluate_bots(hands: int, rng: random.Random) -> None:
        bots = [pyspiel.make_uniform_random_bot(p, rng.randrange(2**31)) for p in range(4)]
        for seed in range(hands):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)

    return {
        "OpenSpiel, Python loop (chance via legal_actions)": via_legal_actions,
        "OpenSpiel, Python loop (chance via chance_outcomes)": via_chance_outcomes,
        "OpenSpiel, all-C++ evaluate_bots": cxx_evaluate_bots,
    }


def rollouts_ours(rollouts: int, rng: random.Random) -> None:
    root = GameState(RULES, seed=42)
    while root.phase is Phase.PASS:
        root.apply(root.legal_actions()[0])
    for _ in range(10):
        root.apply(root.legal_actions()[0])
    for _ in range(rollouts):
        root.clone().play_random(rng)


def rollouts_openspiel() -> Callable[[int, random.Random], None]:
    import pyspiel

    def run(rollouts: int, rng: random.Random) -> None:
        root = pyspiel.load_game("hearts").new_initial_state()
        while root.is_chance_node() or len(root.history()) < 53 + 12 + 10:
            root.apply_action(root.legal_actions()[0])
        for _ in range(rollouts):
            state = root.clone()
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))

    return run


def measure(
    contenders: dict[str, Callable[[int, random.Random], None]], count: int, rounds: int
) -> dict[str, float]:
    """Items/s of each contender: the median over `rounds` rounds, each contender running
    `count` items per round in turn, so that a drifting machine load hits all alike."""
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    for round_number in range(rounds):
        for name, run in contenders.items():
            rng = random.Random(round_number)
            started = time.perf_counter()
            run(count, rng)
            rates[name].append(count / (time.perf_counter() - started))
    return {name: statistics.median(values) for name, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2_000, help="hands per contender per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    try:
        peers = openspiel_loops()
        peer_rollouts: Callable[[int, random.Random], None] | None = rollouts_openspiel()
    except ImportError:
        print("OpenSpiel is not installed (pip install --no-deps open_spiel==2.0.2): ours only")
        peers, peer_rollouts = {}, None

    import engine

    # (BIDEL_ENGINE=pure measures the pure-Python build; docs/engine.md, "Two builds")
    print(f"Our engine: {engine.BUILD}")
    print(
        f"Whole random hands of `standard` Hearts, hands/s: median of {args.rounds} rounds of "
        f"{args.hands} hands, contenders interleaved"
    )
    contenders: dict[str, Callable[[int, random.Random], None]] = {
        "ours, text API loop (legal_actions + apply)": ours_text_api,
        "ours, index API loop (legal_mask + apply_index)": ours_index_api,
        "ours, built-in rollout (GameState.play_random)": ours_rollout,
        **peers,
    }
    results = measure(contenders, args.hands, args.rounds)
    for name, value in results.items():
        print(f"  {name:55} {value:10,.0f}")
    if peers:
        for peer in [k for k in results if "Python loop" in k]:
            print(f"Ratio to {peer}:")
            for name in list(results)[:3]:
                print(f"  {name:55} {results[name] / results[peer]:9.2f}x")
            cxx = results["OpenSpiel, all-C++ evaluate_bots"] / results[peer]
            print(f"  {'(OpenSpiel all-C++ evaluate_bots, the stretch mark)':55} {cxx:9.2f}x")

    print("Clone + random rollout from the 11th card of a hand, rollouts/s:")
    rollouts: dict[str, Callable[[int, random.Random], None]] = {
        "ours (clone + play_random)": rollouts_ours
    }
    if peer_rollouts is not None:
        rollouts["OpenSpiel (clone + Python loop)"] = peer_rollouts
    rollout_rates = measure(rollouts, args.hands, args.rounds)
    for name, value in rollout_rates.items():
        print(f"  {name:55} {value:10,.0f}")
    if peer_rollouts is not None:
        ratio = (
            rollout_rates["ours (clone + play_random)"]
            / rollout_rates["OpenSpiel (clone + Python loop)"]
        )
        print(f"  {'ratio':55} {ratio:9.2f}x")


if __name__ == "__main__":
    main()
