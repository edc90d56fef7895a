"""Is the compiled engine a stronger bot? ``montecarlo`` on a clock, compiled vs pure, in
duplicate.

    .venv/bin/python bench/compiled_strength.py [--deals 60] [--hands 2] [--think normal]
        [--seed 1] [--jobs 1] [--out FILE]

Four seats of the same Monte-Carlo bot (``bots_sdk.builtin.montecarlo`` given a clock: as
many samples as fit in --think seconds per play, at least four). ``--think normal``, the
default, is montecarlo's normal clock: the time its own search (the fixed 20 samples it plays
with on the ladder) takes per play on the compiled engine, measured here first in a process
of its own; so the compiled seats play about as they always do, and the pure ones get what
that time buys them. Two seats run the compiled engine and two the
pure-Python one (``BIDEL_ENGINE`` set per bot process). In duplicate, each deal is played with
the seats rotated through every position, so the cards' luck cancels; the summary pairs the
two builds deal by deal: points per hand (lower is better) with the 95% interval of the
difference, and how many samples each build searched per play.

A run is long at a real clock, so it is kept a game at a time in --out (JSON lines; by default
``var/strength-<think>.jsonl``): run the same command again and it goes on where it stopped,
or with a larger --deals to add deals; the summary is over every game in the file.
``--jobs 2`` plays two games side by side (one bot thinks at a time in a game, so each game
keeps about one core busy). Bot processes are started unsandboxed here (both builds alike):
the sandbox is not what is measured, and its empty environment would not pass the build on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots_sdk.referee.runner import TimeControl, run_match  # noqa: E402
from bots_sdk.referee.stats import mean_ci  # noqa: E402
from bots_sdk.sandbox import BuiltBot, Launch, Unsandboxed  # noqa: E402

BUILDS = ("compiled", "pure")

BOT = '''"""montecarlo on a clock of {think} s per play; says how many samples each play took."""
import json
import sys

from bots_sdk.builtin.montecarlo import MonteCarloBot


class Timed(MonteCarloBot):
    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed, think={think})
        self.searched: list[int] = []

    def play(self, view):
        card = super().play(view)
        if self.last_samples:
            self.searched.append(self.last_samples)
        return card

    def on_game_end(self, view) -> None:
        print("samples " + json.dumps(self.searched), file=sys.stderr, flush=True)
'''


class PerBuild(Unsandboxed):
    """Starts ``compiled.py`` with the compiled engine and ``pure.py`` with the pure one."""

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
        assert isinstance(bot, Path)  # (Python bots only)
        launch = super().launch(bot, seat)
        launch.env["BIDEL_ENGINE"] = bot.stem  # "compiled" or "pure": refused if absent
        return launch


def play_deal(seed: int, hands: int, think: float, label: str, folder: Path) -> dict[str, Any]:
    """One game of ``hands`` hands dealt from ``seed``, played four times with the seats
    rotated: per hand, each build's mean points; per build, the samples of every play and
    the faults."""
    bots = [str(folder / "compiled.py"), str(folder / "pure.py")] * 2
    match = run_match(
        "standard",
        seed=seed,
        bots=bots,
        games=1,
        hands=hands,
        duplicate=True,
        time_control=TimeControl(move=max(1.0, 1.5 * think), bank=60.0),
        launcher=PerBuild(),
    )
    points: dict[int, dict[str, list[int]]] = {}
    samples: dict[str, list[int]] = {build: [] for build in BUILDS}
    faults: dict[str, int] = dict.fromkeys(BUILDS, 0)
    for game in match.games:
        for seat, result in enumerate(game.seats):
            build = Path(result.bot).stem
            faults[build] += len(result.faults)
            for line in result.stderr.splitlines():
                if line.startswith("samples "):
                    samples[build].extend(json.loads(line.removeprefix("samples ")))
            for hand in game.state.history:
                if not hand.void:
                    points.setdefault(hand.hand_number, {b: [] for b in BUILDS})[build].append(
                        hand.scores[seat]
                    )
    return {
        "seed": seed,
        "think": label,
        "seconds": think,
        "length": hands,
        "hands": [
            {"hand": number, **{b: statistics.fmean(by[b]) for b in BUILDS}}
            for number, by in sorted(points.items())
        ],
        "samples": samples,
        "faults": faults,
    }


def normal_clock(hands: int = 12) -> tuple[float, int]:
    """What montecarlo as it plays on the ladder (its default 20 samples) spends on a play
    that has a choice, on the compiled engine: the mean over ``hands`` hands of four of it
    (in this process, no referee), and how many plays that was."""
    import engine
    from bots_sdk.builtin.montecarlo import MonteCarloBot
    from bots_sdk.view import View
    from engine.rules import RuleSet
    from engine.state import GameState

    if engine.BUILD.kind != "compiled":
        raise SystemExit(f"the normal clock is measured on the compiled engine, not {engine.BUILD}")
    rules = RuleSet.from_preset("standard", pass_cycle=["hold"])
    spent: list[float] = []
    for hand in range(hands):
        state = GameState(rules, seed=10_000 + hand)
        bots = [
            MonteCarloBot(seed=random.Random(hand * 4 + seat).getrandbits(32)) for seat in range(4)
        ]
        while not state.history:
            seat = state.current
            view = View.from_observation(state.observation(seat))
            started = time.perf_counter()
            card = bots[seat].play(view)
            if len(view.legal) > 1:
                spent.append(time.perf_counter() - started)
            state.apply(card)
    return statistics.fmean(spent), len(spent)


def read_games(path: Path, think: str, hands: int) -> Iterator[dict[str, Any]]:
    """The games of ``path`` played at this clock (``normal`` or seconds) and length."""
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        game = json.loads(line)
        if game["think"] == think and game["length"] == hands:
            yield game


def report(games: list[dict[str, Any]], think: str) -> None:
    deals = [hand for game in games for hand in game["hands"]]
    if not deals:
        print("no games played yet")
        return
    seconds = statistics.fmean(game["seconds"] for game in games)
    print(
        f"montecarlo thinking {think} ({seconds * 1000:.1f} ms) per play: {len(games)} games, "
        f"{len(deals)} deals"
    )
    for build in BUILDS:
        mean, (low, high) = mean_ci([hand[build] for hand in deals])
        searched = [n for game in games for n in game["samples"][build]]
        faults = sum(game["faults"][build] for game in games)
        typical = statistics.median(searched) if searched else 0
        print(
            f"  {build:8} {mean:6.2f} points/hand [{low:.2f}, {high:.2f}]; "
            f"{typical:.0f} samples per play (median of {len(searched)}); {faults} faults"
        )
    difference, (low, high) = mean_ci([hand["compiled"] - hand["pure"] for hand in deals])
    verdict = "stronger" if high < 0 else "weaker" if low > 0 else "no different (CI holds 0)"
    print(
        f"compiled minus pure: {difference:+.3f} points/hand, 95% CI [{low:+.3f}, {high:+.3f}] "
        f"over {len(deals)} deals: compiled is {verdict}"
    )


def calibrated() -> tuple[float, int]:
    """:func:`normal_clock` in a process of its own on the compiled engine."""
    done = subprocess.run(
        [sys.executable, __file__, "--calibrate"],
        env={**os.environ, "BIDEL_ENGINE": "compiled"},
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, plays = json.loads(done.stdout)
    return float(seconds), int(plays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=60, help="deals, each played 4 times")
    parser.add_argument("--hands", type=int, default=2, help="hands (deals) per game")
    parser.add_argument(
        "--think",
        default="normal",
        help="seconds per play, or 'normal': what montecarlo's own search (20 samples) "
        "takes per play on the compiled engine, measured first",
    )
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed")
    parser.add_argument("--jobs", type=int, default=1, help="games played side by side")
    parser.add_argument("--out", type=Path, help="the games so far (JSON lines)")
    parser.add_argument("--calibrate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.calibrate:
        print(json.dumps(normal_clock()))
        return
    if args.think == "normal":
        think, plays = calibrated()
        print(
            f"montecarlo's normal clock: {think * 1000:.2f} ms per play (its 20-sample search "
            f"on the compiled engine, the mean of {plays} plays with a choice)"
        )
    else:
        think = float(args.think)
        args.think = f"{think:g}"
    out = args.out or Path("var") / f"strength-{args.think}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="bidel-strength-"))
    for build in BUILDS:
        (folder / f"{build}.py").write_text(BOT.format(think=think))
    seeds = range(args.seed, args.seed + max(1, args.deals // args.hands))
    done = {game["seed"] for game in read_games(out, args.think, args.hands)}
    todo = [seed for seed in seeds if seed not in done]
    print(
        f"montecarlo thinking {think * 1000:.2f} ms per play, compiled vs pure engine: "
        f"{len(seeds)} games of {args.hands} hands in duplicate, {len(todo)} to play "
        f"({args.jobs} at a time); kept in {out}"
    )
    lock = threading.Lock()

    def play(seed: int) -> None:
        game = play_deal(seed, args.hands, think, args.think, folder)
        with lock, out.open("a") as file:
            file.write(json.dumps(game) + "\n")
            print(f"  game {seed} done", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for future in [pool.submit(play, seed) for seed in todo]:
            future.result()
    games = [g for g in read_games(out, args.think, args.hands) if g["seed"] in seeds]
    report(games, args.think)


if __name__ == "__main__":
    os.environ.setdefault("DEBUG", "1")
    main()
