"""Matches per minute of the runner alone: no Celery, no database, this tree against another.

    .venv/bin/python bench/runner_rate.py [--matches 20] [--rounds 3] [--baseline REV]

Two processes each play --matches games to 100 (`run_match`, the example bots `ducker` and
`dumper` twice, sandboxed as on a runner) side by side; the rate is what 2 cores give when
nothing but the runner's work (the referee, the sandbox, the bots) is in the way. With
``--baseline REV`` the same runs for REV's tree (exported with ``git archive``, bytecode
written; its engine compiled when REV knows how), the two taking turns, each reporting its
median round. ``bench/platform_bench.py --baseline`` measures the same matches through the
platform (Celery, PostgreSQL, Redis): the difference is the platform's share.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from trees import ROOT, export

BOTS = ["bots_sdk/examples/ducker.py", "bots_sdk/examples/dumper.py"] * 2
# One player of the matches, run in the tree given as its working folder.
PLAYER = """
import sys
from bots_sdk.referee.runner import run_match
for seed in range(int(sys.argv[1])):
    run_match("standard", 1000 + seed, sys.argv[2:])
"""


def rate(tree: Path, matches: int) -> float:
    """Matches per minute of two processes playing ``matches`` each in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, "-c", PLAYER]
    subprocess.run([*argv, "1", *BOTS], cwd=tree, env=env, check=True)  # (warm the caches)
    started = time.perf_counter()
    players = [subprocess.Popen([*argv, str(matches), *BOTS], cwd=tree, env=env) for _ in "ab"]
    if any(player.wait() for player in players):
        raise SystemExit("a player failed")
    return 2 * matches / (time.perf_counter() - started) * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="per process and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="compare with REV's tree")
    args = parser.parse_args()
    trees = {"this tree": ROOT}
    if args.baseline:
        commit, tree = export(args.baseline)
        trees = {f"{commit} (baseline)": tree, **trees}
    rates: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            rates[name].append(rate(tree, args.matches))
    print(
        f"Matches per minute, the runner alone (2 processes, {2 * args.matches} games to 100 "
        f"a round, sandboxed, no Celery or database), median of {args.rounds} rounds:"
    )
    for name, values in rates.items():
        rounds = ", ".join(f"{v:.0f}" for v in values)
        print(f"  {name:30} {statistics.median(values):7.1f}  (rounds: {rounds})")
    if args.baseline:
        base, ours = (statistics.median(values) for values in rates.values())
        print(f"  ratio, this tree to the baseline: {ours / base:.2f}x")


if __name__ == "__main__":
    main()
