"""How strong the learned example bot is: examples/learned/bot.py against random, low and
heuristic, in the duplicate format.

    .venv/bin/python bench/learned_strength.py [--hands 400] [--seed 1] [--rules standard]

For each opponent, the bot sits with copies of it in every other seat, and every deal is
replayed with the seats rotated through all positions (``run_match(..., duplicate=True)``),
so each seat's luck of the cards cancels. Printed per opponent: both sides' points per
hand and the paired difference (bot − opponent, per deal; negative is better for the bot)
with its 95% confidence interval, as ``python -m bots_sdk play --duplicate`` computes them
(:func:`bots_sdk.referee.stats.summarize`).

The bot file runs **unsandboxed** (``unsafe=True``, the ``--unsafe-no-sandbox`` path: a plain
subprocess speaking the bot protocol), so this runs on any machine; it is our own file.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bots_sdk.referee.runner import run_match  # noqa: E402
from bots_sdk.referee.stats import summarize  # noqa: E402
from engine.rules import RuleSet  # noqa: E402

BOT = ROOT / "examples" / "learned" / "bot.py"
OPPONENTS = ("random", "low", "heuristic")


def strength(
    opponent: str, hands: int, seed: int, rules: str = "standard", bot: Path = BOT
) -> dict[str, object]:
    """The bot against copies of ``opponent`` in every other seat over ``hands`` deals, in
    duplicate."""
    source = str(bot)
    seats = RuleSet.from_spec(rules).players
    result = run_match(
        rules, seed, [source] + [opponent] * (seats - 1), hands=hands, duplicate=True, unsafe=True
    )
    summary = summarize(result)
    points = {entry["name"]: entry for entry in summary["bots"]}
    pair = next(p for p in summary["comparisons"] if {p["a"], p["b"]} == {source, opponent})
    sign = 1 if pair["a"] == source else -1
    low, high = sorted(sign * x for x in pair["ci95"])
    faults = sum(points[source]["faults"].values())
    return {
        "opponent": opponent,
        "bot_points": points[source]["mean_points"],
        "opponent_points": points[opponent]["mean_points"],
        "difference": sign * pair["mean_difference"],
        "ci95": [low, high],
        "deals": pair["deals"],
        "faults": faults,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=400, help="deals per opponent")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--bot", type=Path, default=BOT, help="a bot file (default: the example)")
    args = parser.parse_args()
    seats = RuleSet.from_spec(args.rules).players
    print(f"{args.bot.name} vs each: {args.rules}, duplicate, {args.hands} deals x {seats} seats")
    print(f"  {'opponent':10} {'learned':>8} {'opponent':>9} {'difference':>11}  95% CI")
    for opponent in OPPONENTS:
        started = time.monotonic()
        row = strength(opponent, args.hands, args.seed, args.rules, args.bot)
        low, high = row["ci95"]  # type: ignore[misc]
        print(
            f"  {opponent:10} {row['bot_points']:8.2f} {row['opponent_points']:9.2f} "
            f"{row['difference']:+11.2f}  [{low:+.2f}, {high:+.2f}]  "
            f"({row['faults']} faults, {time.monotonic() - started:.0f} s)",
            flush=True,
        )
    print("  (points per hand; difference = learned - opponent, per deal: negative is better)")


if __name__ == "__main__":
    main()
