"""Command line: ``python -m engine verify FILE`` (``-`` for stdin), ``random``, ``presets``.

``verify`` prints one JSON object (see :func:`engine.record.verify`) and exits 1 when the
record is invalid; unreadable input gets the same shape with ``"stage": "json"``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from typing import Any

import engine
from engine.record import invalid, verify
from engine.rules import PRESETS, RulesError, RuleSet, allowed_player_counts
from engine.simulate import random_game
from engine.state import GameState


def _read(path: str) -> Any:
    if path == "-":
        text = sys.stdin.read()
    else:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    return json.loads(text)


def _verify_any(record: object) -> dict[str, object]:
    """One game record, or a match record of games (what ``bots_sdk play --record`` writes):
    valid when every game is, with each game's result under ``games``."""
    if isinstance(record, dict) and "games" in record and "hands" not in record:
        games = record["games"]
        if not isinstance(games, list) or not games:
            return invalid("record", "'games' must be a non-empty list of game records")
        results = [verify(game) for game in games]
        bad = next((n for n, r in enumerate(results, 1) if not r["valid"]), None)
        summary: dict[str, object] = {"valid": bad is None, "games": results}
        if bad is not None:
            summary["error"] = f"game {bad}: {results[bad - 1]['error']}"
        return summary
    return verify(record)


def _verify(path: str) -> int:
    try:
        record = _read(path)
    except OSError as exc:
        result = invalid("json", f"cannot read {path}: {exc.strerror or exc}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        result = invalid("json", f"not valid JSON: {exc}")
    else:
        result = _verify_any(record)
    print(json.dumps(result))
    return 0 if result["valid"] else 1


def _random(rules_spec: str, seed: int, players: int | None, moves_seed: int | None) -> int:
    try:
        spec: Any = json.loads(rules_spec) if rules_spec.lstrip().startswith("{") else rules_spec
        rules = RuleSet.from_spec(spec)
        if players is not None:
            rules = rules.with_players(players)
    except (RulesError, json.JSONDecodeError) as exc:
        print(f"engine: {exc}", file=sys.stderr)
        return 2
    state = random_game(rules, seed, random.Random(seed if moves_seed is None else moves_seed))
    print(json.dumps(state.to_record()))
    return 0


def games_digest(hands: int) -> dict[str, Any]:
    """SHA-256 over ``hands`` random hands, round-robin over every preset at each of its table
    sizes: every legal-action list, every seat's observation at each turn of the step path,
    every record and score. Odd games finish each hand with the rollout (``play_random``),
    even ones step through ``legal_actions``/``apply``. The compiled and the pure build
    must print the same digest (``tests/engine/test_builds.py``).

    >>> games_digest(4)["hands"]
    4
    """
    tables = [(name, count) for name in PRESETS for count in allowed_player_counts(name)]
    digest = hashlib.sha256()
    played = game = 0
    while played < hands:
        name, count = tables[game % len(tables)]
        rules = RuleSet.from_preset(name).with_players(count)
        rng = random.Random(game)
        state = GameState(rules, seed=game)
        for _ in range(3):  # up to three hands of each game, so totals and dealers move on
            if game % 2:
                state.play_random(rng)
            else:
                step = 0
                while (seat := state.current_seat) is not None:
                    legal = state.legal_actions()
                    digest.update(",".join(legal).encode())
                    if step % 8 == 0:
                        view = state.observation(seat).to_dict()
                        digest.update(json.dumps(view, sort_keys=True).encode())
                    state.apply(legal[rng.randrange(len(legal))])
                    step += 1
            played += 1
            if state.is_game_over or played == hands:
                break
            state.next_hand()
        digest.update(json.dumps([state.to_record(), state.totals, state.winners]).encode())
        game += 1
    return {"build": str(engine.BUILD), "hands": played, "sha256": digest.hexdigest()}


def _presets() -> int:
    for name in PRESETS:
        counts = allowed_player_counts(name)
        settings = RuleSet.from_preset(name).to_dict()
        print(f"{name:14} players {counts.start}-{counts.stop - 1}: {settings}")
    return 0


class PrintVersion(argparse.Action):
    """``--version``: prints its line as it is (argparse's own action wraps it at the
    terminal's width) and exits."""

    def __init__(self, option_strings: list[str], version: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            nargs=0,
            default=argparse.SUPPRESS,
            help="print the version and the engine's build, then exit",
        )
        self.version = version

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(self.version)
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine", description="The Bidel Hearts engine."
    )
    parser.add_argument(
        "--version", action=PrintVersion, version=f"engine {engine.__version__}: {engine.BUILD}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("verify", help="referee a game record; prints one JSON object")
    check.add_argument("file", help="the record's path, or - for standard input")
    play = commands.add_parser("random", help="print the record of a game of random moves")
    play.add_argument("--rules", default="standard", help="a preset name or a JSON rules object")
    play.add_argument("--seed", type=int, default=0, help="the deal seed")
    play.add_argument("--players", type=int, help="the player count (applies its table)")
    play.add_argument("--moves-seed", type=int, help="seed of the random moves (default: --seed)")
    commands.add_parser("presets", help="list the rule presets")
    digest = commands.add_parser(
        "digest", help="random hands over every preset, hashed: equal on every correct build"
    )
    digest.add_argument("--hands", type=int, default=5000)
    args = parser.parse_args(argv)
    if args.command == "digest":
        print(json.dumps(games_digest(args.hands)))
        return 0
    if args.command == "verify":
        return _verify(args.file)
    if args.command == "random":
        return _random(args.rules, args.seed, args.players, args.moves_seed)
    return _presets()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # (its reader stopped early, as `| head` does): quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
