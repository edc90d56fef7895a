"""The cost of the sandbox: the same bot in-process, as a plain subprocess, and sandboxed.

    .venv/bin/python bench/match_bench.py [--hands 20] [--starts 20]

Prints bot start-up time (spawn to "ready", median and p99 of --starts) and the per-decision
round trip (view to the bot and its answer back, median and p99) of a 4-bot match where every
seat plays the lowest legal card. The in-process figure is the bot's own thinking time, so
the difference is the overhead of the protocol (and of the sandbox). Aims: start-up under
100 ms, round trip under 0.3 ms median. The sandbox needs bubblewrap and root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots_sdk.builtin.simple import LowBot  # noqa: E402
from bots_sdk.referee.players import Answer, InProcessPlayer, ProcessPlayer  # noqa: E402
from bots_sdk.referee.runner import fallback_action  # noqa: E402
from bots_sdk.sandbox import Bubblewrap, Namespaces, SandboxUnavailable, Unsandboxed  # noqa: E402
from bots_sdk.view import View  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from engine.state import GameState, Phase  # noqa: E402

BOT = """from bots_sdk import Bot, lowest


class Lowest(Bot):
    def pass_cards(self, view):
        return view.hand[-3:]

    def play(self, view):
        return lowest(view.legal)
"""
DECISIONS = {Phase.PASS: "pass", Phase.PLAY: "play"}


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms"


def startups(make, count: int) -> list[float]:
    times = []
    for _ in range(count):
        player = make()
        started = time.perf_counter()
        assert player.start(0, "standard", 1) is None
        times.append(time.perf_counter() - started)
        player.close()
    return times


def round_trips(players: list, hands: int) -> list[float]:
    rules = RuleSet.from_preset("standard")
    for seat, player in enumerate(players):
        assert player.start(seat, rules.to_spec(), seat) is None
    times: list[float] = []
    state = GameState(rules, seed=1)
    try:
        for _ in range(hands):
            while state.phase in DECISIONS:
                seat = state.current
                view = View.from_observation(state.observation(seat))
                answer = players[seat].decide(DECISIONS[state.phase], view, None)
                assert isinstance(answer, Answer), answer
                times.append(answer.seconds)
                action = answer.action
                for card in action if isinstance(action, list) else [action]:
                    state.apply(card)
            if state.phase is Phase.GAME_OVER:
                break
            state.next_hand()
    finally:
        for player in players:
            player.close()
    assert fallback_action  # the same fallback path exists; unused here
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bot = Path(folder) / "lowest.py"
        bot.write_text(BOT)
        launchers: dict[str, type] = {"plain subprocess": Unsandboxed}
        for name, backend in (
            ("sandboxed (bubblewrap)", Bubblewrap),
            ("sandboxed (namespaces)", Namespaces),
        ):
            try:
                backend.check()
                launchers[name] = backend
            except SandboxUnavailable as exc:
                print(f"({name}: not here: {exc})")
        print(f"Bot start-up, spawn to 'ready' ({args.starts} starts):")
        for name, launcher in launchers.items():
            times = startups(lambda launcher=launcher: ProcessPlayer(bot, launcher()), args.starts)
            print(f"  {name:24} {_ms(times)}")
        print(f"Per-decision round trip, 4 seats, {args.hands} hands:")
        in_process = round_trips([InProcessPlayer(LowBot()) for _ in range(4)], args.hands)
        print(f"  {'in-process':24} {_ms(in_process)}")
        for name, launcher in launchers.items():
            times = round_trips([ProcessPlayer(bot, launcher()) for _ in range(4)], args.hands)
            overhead = statistics.median(times) - statistics.median(in_process)
            print(f"  {name:24} {_ms(times)}   overhead {overhead * 1000:.2f} ms (median)")


if __name__ == "__main__":
    main()
