"""How strong the ``strong`` built-in is: against ``montecarlo`` and ``heuristic``, and
``montecarlo`` against ``heuristic`` for scale, in duplicate.

    .venv/bin/python bench/strong_bench.py [--deals 200] [--jobs 1] [--seed 1] [--budget B]
        [--pass-budget P] [--presets standard,persian,black_lady_54] [--pairs strong:montecarlo,...]

Each pair sits one bot against copies of the other in every other seat; every game (as many
hands as the preset's pass cycle, so each pass direction is played) is replayed with the first
bot in each seat in turn, so the luck of the cards cancels. Played in this process with the
engine directly (no referee, no clock): the bots see the views a referee would send. Printed
per preset and pair: both sides' points per hand and the paired difference (first bot − second
bot, per deal; negative is better for the first: points are bad in Hearts) with its 95%
interval (:func:`bots_sdk.referee.stats.mean_ci`), the deals played, and the first bot's edge
against ``heuristic`` set beside ``montecarlo``'s; then the time per play with a choice
(median, p99) of ``strong`` and ``montecarlo``, and per pass of ``strong`` (its pass search).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots_sdk.bot import Bot  # noqa: E402
from bots_sdk.builtin.heuristic import HeuristicBot  # noqa: E402
from bots_sdk.builtin.montecarlo import MonteCarloBot  # noqa: E402
from bots_sdk.builtin.strong import StrongBot  # noqa: E402
from bots_sdk.referee.stats import mean_ci  # noqa: E402
from bots_sdk.view import View  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from engine.state import GameState  # noqa: E402

PAIRS = ("strong:montecarlo", "strong:heuristic", "montecarlo:heuristic")
PRESETS = ("standard", "persian", "black_lady_54")
TIMED = ("strong", "montecarlo", "strong pass")

#: One deal's result: (preset, pair, seed, hand number, attempt) -> (first's mean, second's).
DealKey = tuple[str, str, int, int, int]


def make_bot(name: str, seed: int, budget: int | None, pass_budget: int | None = None) -> Bot:
    if name == "strong":
        return StrongBot(seed=seed, budget=budget or StrongBot().budget, pass_budget=pass_budget)
    if name == "montecarlo":
        return MonteCarloBot(seed=seed)
    if name == "heuristic":
        return HeuristicBot(seed=seed)
    raise SystemExit(f"unknown bot {name!r}")


def play_game(
    rules: RuleSet, seed: int, bots: list[Bot], names: list[str], hands: int
) -> tuple[list[tuple[int, int, tuple[int, ...]]], dict[str, list[float]]]:
    """One game dealt from ``seed``, ``hands`` hands long (a redealt hand not counted): each
    hand's (number, attempt, scores), and the seconds of every play with a choice, by bot."""
    state = GameState(rules, seed=seed)
    times: dict[str, list[float]] = defaultdict(list)
    played = 0
    while True:
        while state.current_seat is not None:
            seat = state.current_seat
            view = View.from_observation(state.observation(seat))
            bot = bots[seat]
            if view.decision == "pass":
                started = time.perf_counter()
                cards = bot.pass_cards(view)
                times[f"{names[seat]} pass"].append(time.perf_counter() - started)
                for card in cards:
                    state.apply(card)
            elif view.decision == "play":
                started = time.perf_counter()
                card = bot.play(view)
                if len(view.legal) > 1:
                    times[names[seat]].append(time.perf_counter() - started)
                state.apply(card)
            elif view.decision == "trump":
                state.apply(bot.declare_trump(view))
            else:
                state.apply(bot.choose_moon(view))
        played += not state.history[-1].void
        if state.is_game_over or played >= hands or len(state.history) >= 3 * hands:
            break
        state.next_hand()
    results = [(h.hand_number, h.attempt, h.scores) for h in state.history if not h.void]
    return results, dict(times)


def play_task(
    preset: str, pair: str, seed: int, budget: int | None, pass_budget: int | None
) -> tuple[dict[DealKey, tuple[list[float], list[float]]], dict[str, list[float]]]:
    """The game of ``seed`` for ``pair`` on ``preset``, once per seat of the first bot."""
    rules = RuleSet.from_preset(preset)
    first, second = pair.split(":")
    n = rules.players
    hands = len(rules.pass_cycle)
    deals: dict[DealKey, tuple[list[float], list[float]]] = {}
    times: dict[str, list[float]] = defaultdict(list)
    for seat in range(n):
        names = [first if s == seat else second for s in range(n)]
        bots = [
            make_bot(name, random.Random(seed * 100 + s).getrandbits(32), budget, pass_budget)
            for s, name in enumerate(names)
        ]
        results, spent = play_game(rules, seed, bots, names, hands)
        for name, seconds in spent.items():
            times[name].extend(seconds)
        for number, attempt, scores in results:
            mine, theirs = deals.setdefault((preset, pair, seed, number, attempt), ([], []))
            mine.append(scores[seat])
            theirs.append(statistics.fmean(scores[s] for s in range(n) if s != seat))
    return deals, dict(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="deals per preset and pair")
    parser.add_argument("--jobs", type=int, default=1, help="games played side by side")
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed")
    parser.add_argument("--budget", type=int, help="strong's rollouts per play (its default)")
    parser.add_argument(
        "--pass-budget", type=int, help="strong's rollouts per pass (its default; 0: heuristic)"
    )
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--pairs", default=",".join(PAIRS))
    args = parser.parse_args()
    presets = args.presets.split(",")
    pairs = args.pairs.split(",")
    tasks = []
    for preset in presets:
        games = max(1, -(-args.deals // len(RuleSet.from_preset(preset).pass_cycle)))
        for seed in range(args.seed, args.seed + games):
            for pair in pairs:
                tasks.append((preset, pair, seed, args.budget, args.pass_budget))
    budget = args.budget or StrongBot().budget
    passing = StrongBot(budget=budget, pass_budget=args.pass_budget).pass_budget
    print(
        f"strong (budget {budget}, {passing} a pass) in duplicate: {', '.join(pairs)} on "
        f"{', '.join(presets)}; "
        f"~{args.deals} deals each, {len(tasks)} games x seats, {args.jobs} at a time",
        flush=True,
    )
    started = time.monotonic()
    deals: dict[DealKey, tuple[list[float], list[float]]] = {}
    times: dict[str, list[float]] = defaultdict(list)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(play_task, *task) for task in tasks]
        for done, future in enumerate(futures, 1):
            found, spent = future.result()
            deals.update(found)
            for name, seconds in spent.items():
                times[name].extend(seconds)
            if done % max(1, len(futures) // 10) == 0:
                print(
                    f"  {done}/{len(futures)} games, {time.monotonic() - started:.0f} s", flush=True
                )
    print(
        f"{'preset':14} {'pair':22} {'first':>7} {'second':>7} {'difference':>11}  "
        f"95% CI          deals"
    )
    edges: dict[tuple[str, str], float] = {}
    for preset in presets:
        for pair in pairs:
            rows = [v for k, v in deals.items() if k[0] == preset and k[1] == pair]
            if not rows:
                continue
            firsts = [statistics.fmean(mine) for mine, _ in rows]
            seconds = [statistics.fmean(theirs) for _, theirs in rows]
            difference, (low, high) = mean_ci([a - b for a, b in zip(firsts, seconds)])
            edges[preset, pair] = difference
            first, second = statistics.fmean(firsts), statistics.fmean(seconds)
            print(
                f"{preset:14} {pair:22} {first:7.2f} {second:7.2f} {difference:+11.2f}  "
                f"[{low:+.2f}, {high:+.2f}]  {len(rows):5}"
            )
    for preset in presets:
        strong = edges.get((preset, "strong:montecarlo"))
        scale = edges.get((preset, "montecarlo:heuristic"))
        if strong is not None and scale is not None:
            verdict = "met" if -strong >= -scale else "not met"
            print(
                f"{preset}: strong's edge on montecarlo {-strong:.2f} vs montecarlo's on "
                f"heuristic {-scale:.2f} points/hand: target {verdict}"
            )
    for name in TIMED:
        spent = sorted(times.get(name, []))
        if spent:
            p99 = spent[min(len(spent) - 1, int(0.99 * len(spent)))]
            print(
                f"{name}: {statistics.median(spent) * 1000:.1f} ms median, {p99 * 1000:.1f} ms p99 "
                f"per {'pass' if name.endswith('pass') else 'play with a choice'} "
                f"({len(spent)})"
            )
    print(f"({time.monotonic() - started:.0f} s; points per hand, lower is better)")


if __name__ == "__main__":
    main()
