"""Is the compiled engine a stronger bot? ``montecarlo`` on a clock, compiled vs pure, in
duplicate.

    .venv/bin/python bench/compiled_strength.py [--deals 60] [--hands 2] [--think 0.1] [--seed 1]

Four seats of the same Monte-Carlo bot (``bots_sdk.builtin.montecarlo`` given a clock: as
many samples as fit in --think seconds per play, 0.1 by default: a tenth of the platform's
one-second move clock), two running the compiled engine and two the pure-Python one
(``BIDEL_ENGINE`` set per bot process). In duplicate, each deal is played with the seats
rotated through every position, so the cards' luck cancels; the summary pairs the two builds
deal by deal: points per hand (lower is better) with the 95% interval of the difference. Bot
processes are started unsandboxed here (both builds alike): the sandbox is not what is
measured, and its empty environment would not pass the build on.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots_sdk.runner import TimeControl, run_match  # noqa: E402
from bots_sdk.sandbox import Launch, Unsandboxed  # noqa: E402
from bots_sdk.stats import summarize  # noqa: E402

BOT = '''"""montecarlo on a clock of {think} s per play."""
from bots_sdk.builtin.montecarlo import MonteCarloBot


class Timed(MonteCarloBot):
    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed, think={think})
'''


class PerBuild(Unsandboxed):
    """Starts ``compiled.py`` with the compiled engine and ``pure.py`` with the pure one."""

    def launch(self, bot: Path, seat: int) -> Launch:
        launch = super().launch(bot, seat)
        launch.env["BIDEL_ENGINE"] = bot.stem  # "compiled" or "pure": refused if absent
        return launch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=60, help="deals, each played 4 times")
    parser.add_argument("--hands", type=int, default=2, help="hands per game")
    parser.add_argument("--think", type=float, default=0.1, help="seconds per play")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bidel-strength-"))
    for build in ("compiled", "pure"):
        (folder / f"{build}.py").write_text(BOT.format(think=args.think))
    bots = [str(folder / "compiled.py"), str(folder / "pure.py")] * 2
    games = args.deals // args.hands
    print(
        f"montecarlo thinking {args.think} s per play, compiled vs pure engine: {games} games "
        f"of {args.hands} hands, in duplicate (each played 4 times, seats rotated)"
    )
    match = run_match(
        "standard",
        seed=args.seed,
        bots=bots,
        games=games,
        hands=args.hands,
        duplicate=True,
        time_control=TimeControl(move=max(1.0, 5 * args.think), bank=60.0),
        launcher=PerBuild(),
        on_progress=lambda done, total: print(f"  {done}/{total} games", end="\r", flush=True),
    )
    print()
    summary = summarize(match)
    for bot in summary["bots"]:
        low, high = bot["ci95"]
        faults = sum(bot["faults"].values())
        print(
            f"  {Path(bot['name']).stem:9} {bot['mean_points']:6.2f} points/hand "
            f"[{low:.2f}, {high:.2f}] over {bot['hands']} hands; {faults} faults; "
            f"{bot['move_ms_mean']:.0f} ms per move"
        )
    (pair,) = summary["comparisons"]
    low, high = pair["ci95"]
    sign = 1 if Path(pair["a"]).stem == "compiled" else -1
    difference = sign * pair["mean_difference"]
    low, high = sorted((sign * low, sign * high))
    verdict = "stronger" if high < 0 else "weaker" if low > 0 else "no different (CI holds 0)"
    print(
        f"compiled minus pure: {difference:+.3f} points/hand, 95% CI [{low:+.3f}, {high:+.3f}] "
        f"over {pair['deals']} deals: compiled is {verdict}"
    )


if __name__ == "__main__":
    os.environ.setdefault("DEBUG", "1")
    main()
