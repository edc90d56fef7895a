"""How much the duplicate format narrows the confidence interval of a comparison.

    .venv/bin/python bench/duplicate_ci.py [--deals 60] [--seed 1]

Plays heuristic against three randoms twice with the same number of hands per seat: once in
the duplicate format (every deal replayed with the seats rotated through all positions) and
once on independent deals, and prints the 95% interval of heuristic − random in points per
hand for both, and the ratio of their widths.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots_sdk.referee.runner import run_match  # noqa: E402
from bots_sdk.referee.stats import summarize  # noqa: E402


def interval(deals: int, seed: int, duplicate: bool) -> tuple[float, list[float], int]:
    bots = ["heuristic", "random", "random", "random"]
    hands = deals if duplicate else 4 * deals  # the same number of hands per seat
    result = run_match("standard", seed, bots, hands=hands, duplicate=duplicate)
    pairs = summarize(result)["comparisons"]
    pair = next(p for p in pairs if {p["a"], p["b"]} == {"heuristic", "random"})
    sign = 1 if pair["a"] == "heuristic" else -1
    low, high = sorted(sign * x for x in pair["ci95"])
    return sign * pair["mean_difference"], [low, high], 4 * deals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    dup = interval(args.deals, args.seed, duplicate=True)
    ind = interval(args.deals, args.seed + 1000, duplicate=False)
    print(f"heuristic - random, points per hand, {dup[2]} hands per seat each:")
    for label, (mean, (low, high), _) in (("duplicate", dup), ("independent", ind)):
        print(f"  {label:12} {mean:+.2f}  95% CI [{low:+.2f}, {high:+.2f}]  width {high - low:.2f}")
    ratio = (ind[1][1] - ind[1][0]) / (dup[1][1] - dup[1][0])
    print(f"  the duplicate interval is {ratio:.2f}x narrower")


if __name__ == "__main__":
    main()
