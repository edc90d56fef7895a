"""Bots in each language: start-up and per-decision round trip, in the sandbox, next to Python.

    .venv/bin/python bench/languages_bench.py [--starts 10] [--hands 8] [--sandbox bubblewrap]

For each language's starter kit (kits/) and a Python bot of the same strategy (the same
decisions as the built-in `low`): each kit is built first (in the sandbox, into a scratch
cache: the build time is printed once), then, interleaved over the languages, --starts times:
the bot started as a match starts it (the sandbox made, the process run, `hello` answered:
start-up), and --hands hands of `standard` played against three `low`s, every decision of the
bot timed from the referee's `act` to its answer (the round trip: the protocol, the bot's
reading of the view, its choice). Printed: start-up p50 / p90 and round-trip p50 / p99 per
language, and each as a multiple of Python's.

Unsandboxed (--sandbox none) shows what the sandbox itself adds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bots_sdk.builds import build  # noqa: E402
from bots_sdk.builds.languages import manifest_of  # noqa: E402
from bots_sdk.builtin import make_builtin  # noqa: E402
from bots_sdk.referee.players import Answer, InProcessPlayer, ProcessPlayer  # noqa: E402
from bots_sdk.referee.runner import PHASE_DECISIONS  # noqa: E402
from bots_sdk.sandbox import default_launcher  # noqa: E402
from bots_sdk.view import View  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from engine.state import GameState, Phase  # noqa: E402

PYTHON_LOW = '''from bots_sdk import Bot, lowest, strength


class Low(Bot):
    """The built-in low, as an uploaded Python bot."""

    def pass_cards(self, view):
        ranked = sorted(view.hand, key=lambda c: (strength(c), "CDHS".index(c[1])), reverse=True)
        return ranked[: view.rules.pass_count]

    def play(self, view):
        return lowest(view.legal)
'''


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def one_run(bot: Path, launcher: object, hands: int, seed: int) -> tuple[float, list[float]]:
    """(start-up seconds, round trips of every decision) of one short match."""
    rules = RuleSet.from_preset("standard").with_overrides(target=10**9)
    state = GameState(rules, seed=seed)
    player = ProcessPlayer(bot, launcher)  # type: ignore[arg-type]
    others = {s: InProcessPlayer(make_builtin("low", seed=s)) for s in range(1, 4)}
    trips: list[float] = []
    started = time.perf_counter()
    fault = player.start(0, rules.to_spec(), seed)
    startup = time.perf_counter() - started
    if fault is not None:
        player.close()
        raise SystemExit(f"{bot}: could not start: {fault} {player.stderr[:400]!r}")
    try:
        done = 0
        while state.phase is not Phase.GAME_OVER:
            if state.phase is Phase.HAND_OVER:
                done += 1
                if done >= hands:
                    break
                state.next_hand()
                continue
            decision = PHASE_DECISIONS[state.phase.value]
            seat = state.current
            view = View.from_observation(state.observation(seat), time_left=10.0)
            if seat == 0:
                begun = time.perf_counter()
                reply = player.decide(decision, view, 10.0)
                trips.append(time.perf_counter() - begun)
                if not isinstance(reply, Answer):
                    raise SystemExit(f"{bot}: {reply}")
            else:
                reply = others[seat].decide(decision, view, None)
                assert isinstance(reply, Answer)
            action = reply.action
            for card in action if decision == "pass" else [action]:
                state.apply(card)
    finally:
        player.close()
    return startup, trips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--sandbox", default=os.environ.get("BIDEL_SANDBOX", "bubblewrap"))
    args = parser.parse_args()
    launcher = default_launcher(
        args.sandbox == "none", None, None if args.sandbox == "none" else args.sandbox
    )
    scratch = Path(tempfile.mkdtemp(prefix="bidel-languages-bench-"))
    os.environ["BIDEL_BUILD_CACHE"] = str(scratch / "builds")
    python_bot = scratch / "low.py"
    python_bot.write_text(PYTHON_LOW)
    bots: dict[str, Path] = {"python": python_bot}
    print(f"sandbox: {args.sandbox}; {args.starts} starts x {args.hands} hands each, interleaved")
    for language in ("cpp", "rust", "java", "javascript"):
        kit = ROOT / "kits" / language
        missing = build.toolchain(language).missing
        if missing:
            print(f"{language:<11} skipped: {', '.join(missing)} not installed here")
            continue
        begun = time.perf_counter()
        made = build.built(build.pack(kit), manifest_of(kit), launcher)
        print(
            f"{language:<11} built in {time.perf_counter() - begun:5.1f} s "
            f"({build.toolchain(language).versions.split(' | ')[0]})"
        )
        bots[language] = kit
        del made
    startups: dict[str, list[float]] = {name: [] for name in bots}
    trips: dict[str, list[float]] = {name: [] for name in bots}
    for run in range(args.starts):
        for name, bot in bots.items():
            startup, times = one_run(bot, launcher, args.hands, seed=100 + run)
            startups[name].append(startup)
            trips[name] += times
    base_start = statistics.median(startups["python"])
    base_trip = statistics.median(trips["python"])
    print()
    print(
        f"{'language':<11} {'start p50':>10} {'p90':>8} {'x python':>9}   "
        f"{'trip p50':>9} {'p99':>9} {'x python':>9}  decisions"
    )
    for name in bots:
        s50, s90 = statistics.median(startups[name]), pct(startups[name], 0.9)
        t50, t99 = statistics.median(trips[name]), pct(trips[name], 0.99)
        print(
            f"{name:<11} {s50 * 1000:8.1f}ms {s90 * 1000:6.1f}ms {s50 / base_start:8.2f}x   "
            f"{t50 * 1000:7.3f}ms {t99 * 1000:7.3f}ms {t50 / base_trip:8.2f}x  {len(trips[name])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
