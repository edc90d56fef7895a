"""``python -m bots_sdk``: play matches locally, replay a recorded game, start a new bot."""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import sys
import zipfile
from pathlib import Path
from typing import Any

import bots_sdk
import engine
from bots_sdk import compile_engine, remote_cli, runtime
from bots_sdk.builds import build
from bots_sdk.builds.languages import LANGUAGES, ManifestError
from bots_sdk.builtin import BUILTIN
from bots_sdk.protocol import clean_text
from bots_sdk.referee.frames import hand_frame, point_values
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import Fault, ProcessPlayer
from bots_sdk.referee.runner import (
    GameResult,
    RefereeConfig,
    TimeControl,
    hand_split,
    run_match,
)
from bots_sdk.referee.stats import summarize
from bots_sdk.sandbox import (
    BACKENDS,
    Launcher,
    SandboxUnavailable,
    default_launcher,
    per_bot_limits,
)
from bots_sdk.tracebacks import own_frames
from engine.__main__ import PrintVersion
from engine.__main__ import main as engine_main
from engine.cards import RANKS, SUITS
from engine.record import replay
from engine.rules import RulesError, RuleSet
from engine.state import MAX_HANDS, GameState, Phase

STARTER = '''"""{name}: a Bidel Hearts bot.

Try it:  bidel play {name}.py random random random   (or: python -m bots_sdk play …)
"""

from bots_sdk import Bot, View, highest, lowest, strength


class {cls}(Bot):
    def pass_cards(self, view: View) -> list[str]:
        # Give away the three highest cards.
        return sorted(view.hand, key=strength)[-view.rules.pass_count :]

    def play(self, view: View) -> str:
        # Duck when following suit; otherwise play the lowest legal card.
        if view.trick and all(card[1] == view.led_suit for card in view.legal):
            best = highest([card for _, card in view.trick if card[1] == view.led_suit])
            below = [card for card in view.legal if strength(card) < strength(best)]
            if below:
                return highest(below)
        return lowest(view.legal)
'''


def _rules(text: str) -> RuleSet:
    return RuleSet.from_spec(json.loads(text) if text.lstrip().startswith("{") else text)


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} games")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _load_problem(bot: str, rules: RuleSet, args: argparse.Namespace) -> str:
    """Why a bot file cannot play ('' when it can): it is started once, as it will play (in
    the sandbox), and must answer ``ready``."""
    path = Path(bot)
    if not path.exists():
        return f"{bot}: no such file, and not a built-in ({', '.join(BUILTIN)})"
    launcher = default_launcher(args.unsafe_no_sandbox, None, args.sandbox)
    return _start_problem(bot, launcher, rules, args.seed)


def _start_problem(bot: str, launcher: Launcher, rules: RuleSet, seed: int) -> str:
    """Why the bot file ``bot`` cannot start under ``rules`` ('' when it can), with its own
    traceback: what ``play`` and ``check`` both say of a bot that cannot load."""
    player = ProcessPlayer(Path(bot), launcher)
    try:
        fault = player.start(0, rules.to_spec(), seed)
    finally:
        stderr = player.close()
    if fault is None:
        return ""
    if fault.said.startswith("BotLoadError: "):  # ours, and clear: no traceback
        return f"{bot}: cannot load: " + _as_given(fault.said.removeprefix("BotLoadError: "), bot)
    # No traceback: the bot never ran (the sandbox could not start it, say): its last words.
    said = own_frames(stderr) or stderr.strip().splitlines()[-3:]
    frames = [_as_given(line, bot) for line in said]
    detail = _as_given(fault.owner_text(), bot)  # (the author's own run: the whole story)
    return "\n".join([f"{bot}: cannot load: {detail}", *(f"  | {line}" for line in frames)])


def _as_given(text: str, bot: str) -> str:
    """``text`` with the bot's path where it ran (in the sandbox, or resolved) as the author
    gave it."""
    path = Path(bot)
    return text.replace(str(path.resolve()), bot).replace(f"/bot/{path.name}", bot)


def _say_sandbox(backend: str | None) -> None:
    """Which sandbox runs the bots here: its layers, what it could not apply, and the packages
    a bot may import besides the standard library and the SDK."""
    launcher = default_launcher(False, None, backend)
    name = backend or os.environ.get("BIDEL_SANDBOX", "bubblewrap")
    if getattr(launcher, "rootless", False):
        name += " (not root: a user namespace per seat)"
    say = functools.partial(print, file=sys.stderr)
    say(f"bots_sdk: sandbox {name}; limits {per_bot_limits()}")
    say(f"bots_sdk: layers applied: {'; '.join(launcher.layers)}")
    for missing in getattr(launcher, "not_applied", []):
        say(f"bots_sdk: not applied here: {missing}")
    say(f"bots_sdk: packages a bot may import: {runtime.describe()}")


def _no_sandbox(exc: SandboxUnavailable) -> int:
    print(
        f"bots_sdk: cannot sandbox bots here: {exc}. "
        "For your own bot only, add --unsafe-no-sandbox.",
        file=sys.stderr,
    )
    return 2


def _sandbox_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--sandbox", choices=list(BACKENDS), help="default: $BIDEL_SANDBOX or bubblewrap"
    )
    command.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run bot files without the sandbox: only for your own bot",
    )


def _check(args: argparse.Namespace) -> int:
    """``check BOT``: a line per scenario; exit 0 when every answer was right, 1 if not (or
    if the bot cannot load: said once, with its traceback, before any scenario), 2 when the
    bot cannot be run here at all."""
    from bots_sdk.check import GAME_SEEDS, SCENARIOS, check, check_games

    path = Path(args.bot)
    if not path.exists():
        print(f"bots_sdk: no bot file or folder {args.bot!r}", file=sys.stderr)
        return 2
    try:
        launcher = default_launcher(args.unsafe_no_sandbox, None, args.sandbox)
        # Every scenario starts the bot afresh: one that cannot load would fail each of them
        # with the same words. Started once first, under the first scenario's rules (the
        # platform's), it is refused once, as `play` refuses it.
        problem = _start_problem(args.bot, launcher, RuleSet.from_spec(SCENARIOS[0].rules), 1)
    except SandboxUnavailable as exc:
        return _no_sandbox(exc)
    if problem:
        print(f"bots_sdk: {problem}", file=sys.stderr)
        print(f"bots_sdk: {args.bot}: no scenario checked: fix the above first", file=sys.stderr)
        return 1
    print(f"Checking {args.bot}: every kind of decision, each in a fresh process")
    findings = check(path, launcher)
    for finding in findings:
        print(_as_given(finding.line(), args.bot))
    failed = [f for f in findings if not f.ok]
    if failed:
        print(f"{len(failed)} of {len(findings)} scenarios failed: see docs/protocol.md")
        return 1
    print(f"all {len(findings)} scenarios passed; then {len(GAME_SEEDS)} whole games")
    games = check_games(path, launcher)
    for finding in games:
        print(_as_given(finding.line(), args.bot))
        for line in finding.frames:
            print(f"      | {_as_given(line, args.bot)}")
    hands = sum(f.covered[0] for f in games)
    decisions = sum(f.covered[1] for f in games)
    covered = f"{len(findings)} scenarios and {len(games)} whole games ({hands} hands, "
    covered += f"{decisions} decisions of the bot)"
    lost = [f for f in games if not f.ok]
    if lost:
        print(f"{len(lost)} of {len(games)} games faulted; covered {covered}")
        return 1
    print(f"all passed: {covered}")
    return 0


def _play(args: argparse.Namespace) -> int:
    try:
        rules = _rules(args.rules)
    except (RulesError, json.JSONDecodeError) as exc:
        print(f"bots_sdk: {exc}", file=sys.stderr)
        return 2
    if len(args.bots) != rules.players:
        print(
            f"bots_sdk: these rules seat {rules.players} bots; {len(args.bots)} given",
            file=sys.stderr,
        )
        return 2
    try:
        for bot in dict.fromkeys(b for b in args.bots if b not in BUILTIN):
            problem = _load_problem(bot, rules, args)
            if problem:
                print(f"bots_sdk: {problem}", file=sys.stderr)
                return 2
    except SandboxUnavailable as exc:
        return _no_sandbox(exc)
    time_control = None if args.no_clock else TimeControl(args.move_time, args.time_bank)
    participants = [Participant.parse(bot) for bot in args.bots]
    config = RefereeConfig(
        hands=args.hands,
        time_control=time_control,
        unsafe=args.unsafe_no_sandbox,
        sandbox=args.sandbox,
    )
    # The referee's engine; the bots' own simulations use the same build (docs/engine.md).
    print(f"bots_sdk: engine {engine.BUILD}", file=sys.stderr)
    split = hand_split(args.hands)
    if len(split) > 1:
        print(
            f"bots_sdk: {args.hands} hands, played as {len(split)} games of at most "
            f"{MAX_HANDS} hands (one game's cap), each dealt from its own seed",
            file=sys.stderr,
        )
    if not args.unsafe_no_sandbox:
        _say_sandbox(args.sandbox)
    try:
        match = run_match(
            rules,
            args.seed,
            participants,
            games=args.games or 1,
            duplicate=args.duplicate,
            on_progress=_progress,
            jobs=args.jobs,
            config=config,
        )
    except SandboxUnavailable as exc:
        return _no_sandbox(exc)
    match.bots = list(args.bots)  # (as given on the command line)
    results = match.games
    summary = summarize(match)
    if args.record:
        Path(args.record).write_text(json.dumps(match.to_dict()))
    if args.json:
        print(json.dumps(summary))
    else:
        _table(summary)
    faulted = _report_faults(args.bots, results)
    return 1 if faulted and not args.allow_faults else 0


def _report_faults(bots: list[str], results: list[GameResult]) -> bool:
    """Print, on stderr, each bot file's first fault and its own traceback; whether any
    bot file faulted (built-ins never do)."""
    faulted = False
    for bot in dict.fromkeys(b for b in bots if b not in BUILTIN):
        seats = [seat for game in results for seat in game.seats if seat.bot == bot]
        faults = [fault for seat in seats for fault in seat.faults]
        if not faults:
            continue
        faulted = True
        first = faults[0]
        where = f"hand {int(first['hand']) + 1}, {first['decision']}"
        print(
            f"bots_sdk: {bot}: {len(faults)} fault(s); the first, {first['class']} ({where}): "
            f"{Fault.from_dict(first).owner_text()}",  # (a local run is its author's)
            file=sys.stderr,
        )
        for seat in seats:
            frames = [_as_given(line, bot) for line in own_frames(seat.stderr)]
            if frames:
                print("\n".join(f"  | {line}" for line in frames), file=sys.stderr)
                break
    return faulted


def _table(summary: dict[str, Any]) -> None:
    games = summary["games"]
    seatings = summary["seatings"]
    played = f"{games} game{'s' * (games != 1)}, {summary['deals']} deals"
    if summary["duplicate"]:
        played += f", each deal played {seatings} times with the seats rotated (duplicate)"
    print(f"{played}; per bot: the games it sat in, the hands it played")
    print(
        f"{'bot':24} {'games':>5} {'hands':>6} {'pts/hand':>9} {'95% CI':>17} {'win%':>6} "
        f"{'moons':>5} {'faults':>22} {'ms mean':>8} {'ms p99':>8}"
    )
    for bot in summary["bots"]:
        faults = ",".join(f"{k}:{v}" for k, v in bot["faults"].items() if v) or "-"
        low, high = bot["ci95"]
        interval = f"[{low:.2f}, {high:.2f}]"
        print(
            f"{bot['name'][:24]:24} {bot['games']:>5} {bot['hands']:>6} "
            f"{bot['mean_points']:>9.2f} {interval:>17} {100 * bot['win_rate']:>5.1f}% "
            f"{bot['moons']:>5} {faults:>22} {bot['move_ms_mean']:>8.2f} {bot['move_ms_p99']:>8.2f}"
        )
    for pair in summary["comparisons"]:
        low, high = pair["ci95"]
        print(
            f"{pair['a']} - {pair['b']}: {pair['mean_difference']:+.2f} points/hand "
            f"[{low:+.2f}, {high:+.2f}] over {pair['deals']} deals: {pair['reading']}"
        )


def _replay(args: argparse.Namespace) -> int:
    """A recorded game hand by hand: each seat's deal and pass, then trick by trick; seats by
    number and bot name, hands and tricks from 1."""
    try:
        data = json.loads(Path(args.file).read_text())
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _fail(f"{args.file} is not a JSON record: {exc}")
    games = data.get("games") if isinstance(data, dict) and "games" in data else [data]
    if not isinstance(games, list) or not games:
        return _fail(f"{args.file} holds no game")
    if not 1 <= args.game <= len(games):
        return _fail(f"--game {args.game}: {args.file} holds games 1 to {len(games)}")
    record = games[args.game - 1]
    try:
        state = replay(record)
    except ValueError as exc:
        return _fail(f"{args.file}, game {args.game}: {exc}")
    names = _seat_names(data, record, state.rules.players)
    label = [
        f"{seat + 1}:{name}" if name else f"seat {seat + 1}" for seat, name in enumerate(names)
    ]
    try:
        _show_game(state, label)
        sys.stdout.flush()  # (so that a reader gone away is found here, not at exit)
    except BrokenPipeError:
        return _reader_gone()
    return 0


def _seat_names(data: Any, record: Any, players: int) -> list[str]:
    """Each seat's bot as a record names it, '' where it does not.

    A game's ``seats`` name them (``bot``): in ``play --record``'s match record a built-in or
    a file's path; in the platform's stored record a built-in, an uploaded version's file
    name or ``person``; in the one its API serves, as the platform names them ("ada-bot
    v2"); the API's match form makes a seat's bot an object (``{"name": ...}``). Without
    them, a match record's ``bots`` in the order of the game's ``rotation``. A record may
    name none.

    >>> _seat_names({}, {"seats": [{"bot": "bots/a.py"}, {"bot": {"name": "ada"}}, {}]}, 3)
    ['a.py', 'ada', '']
    >>> _seat_names({"bots": ["x", "y", "z"]}, {"rotation": 1}, 3)
    ['y', 'z', 'x']
    """
    if not isinstance(record, dict):
        return [""] * players
    seats = record.get("seats")
    if isinstance(seats, list) and len(seats) == players:
        return [_seat_name(seat.get("bot") if isinstance(seat, dict) else seat) for seat in seats]
    bots = data.get("bots") if isinstance(data, dict) else None
    rotation = record.get("rotation", 0)
    if isinstance(bots, list) and len(bots) == players and isinstance(rotation, int):
        return [_seat_name(bots[(seat + rotation) % players]) for seat in range(players)]
    return [""] * players


def _seat_name(bot: Any) -> str:
    if isinstance(bot, dict):
        bot = bot.get("name")
    if not isinstance(bot, str):
        return ""
    return clean_text(Path(bot).name, limit=40)  # (a file's path as given: its name)


def _show_game(state: GameState, label: list[str]) -> None:
    rules = state.rules
    values = point_values(rules)
    width = max(len(text) for text in label)
    print("Seats: " + "  ".join(label))
    for hand in state.history:
        entry = hand.to_json()
        frame = hand_frame(rules, hand.hand_number, entry, hand.tricks, values, None)
        print(f"Hand {hand.hand_number + 1}" + (" (void: dealt again)" if hand.void else ""))
        for seat, cards in enumerate(frame["dealt"]):
            print(f"  dealt  {label[seat]:{width}}  {_cards(cards)}")
        if rules.pass_count:
            direction = frame["pass_direction"]
            print("  no passing (hold)" if direction == "hold" else f"  passing {direction}")
        if frame["pass_to"] is not None:
            for seat, cards in enumerate(frame["passes"]):
                to = label[frame["pass_to"][seat]]
                print(f"  passed {label[seat]:{width}}  {_cards(cards, ' ')} -> {to}")
        if entry.get("trump") is not None and hand.hakem is not None:
            print(f"  trump {entry['trump']}, declared by {label[hand.hakem]}")
        for number, trick in enumerate(hand.tricks, 1):
            plays = "  ".join(f"{label[seat]} {card}" for seat, card in trick.plays)
            winner = "nobody" if trick.winner is None else label[trick.winner]
            print(f"  trick {number:2}: {plays}   -> {winner}")
        print(
            f"  points {list(hand.points)}  scores {list(hand.scores)}"
            + (f"  moon by {label[hand.shooter]}" if hand.shooter is not None else "")
        )
    winners = [label[seat] for seat in state.winners]
    print(
        f"Totals {list(state.totals)}"
        + (f"  winners {', '.join(winners)}" if state.phase is Phase.GAME_OVER else "")
    )


def _cards(cards: list[str], between_suits: str = "  ") -> str:
    """Cards by suit, each suit low to high.

    >>> _cards(["AS", "2C", "TH", "9C"]), _cards(["AS", "2C", "9C"], " ")
    ('2C 9C  TH  AS', '2C 9C AS')
    """
    suits = [[card for card in cards if card[1] == suit] for suit in SUITS]
    return between_suits.join(
        " ".join(sorted(held, key=lambda card: RANKS.index(card[0]))) for held in suits if held
    )


def _reader_gone() -> int:
    """The reader of standard output went away (``bidel replay FILE | head``): stop quietly
    with the status of a command SIGPIPE ended. Standard output now points at /dev/null, or
    the interpreter's flush at exit would fail again, with a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def _fail(message: str) -> int:
    print(f"bots_sdk: {message}", file=sys.stderr)
    return 2


#: The starter kits of the other languages (:mod:`bots_sdk.builds.languages`), one folder each.
KITS = Path(__file__).resolve().parent / "kits"


def _new_kit(args: argparse.Namespace) -> int:
    """Copy a language's starter kit to the folder NAME."""
    kit = KITS / args.lang
    folder = Path(args.name)
    if not kit.is_dir():
        return _fail(f"no starter kit for {args.lang!r} in this SDK")
    if folder.exists():
        return _fail(f"{folder} exists; not overwriting it")
    if not folder.parent.is_dir():
        return _fail(f"{folder.parent} is not a folder")
    shutil.copytree(kit, folder)
    command = "bidel" if Path(sys.argv[0]).name == "bidel" else "python -m bots_sdk"
    print(f"wrote {folder}/ (the {args.lang} starter kit; {folder}/README.md says what is where)")
    print(f"try  {command} play {folder} low low low")
    print(f"then {command} pack {folder}   (makes {folder.name}.zip to upload)")
    return 0


def _pack(args: argparse.Namespace) -> int:
    """``pack FOLDER``: the zip the platform takes (manifest and sources; no build outputs)."""
    folder = Path(args.folder)
    if not folder.is_dir():
        return _fail(f"{folder} is not a folder")
    try:
        data = build.pack(folder)
    except ManifestError as exc:
        return _fail(str(exc))
    if len(data) > build.MAX_PACKED:
        return _fail(f"the packed bot is {len(data)} bytes; the platform takes {build.MAX_PACKED}")
    out = (
        Path(args.output)
        if args.output
        else folder.resolve().parent / f"{folder.resolve().name}.zip"
    )
    out.write_bytes(data)
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
    print(
        f"wrote {out}: {len(names)} files, {len(data)} bytes ({', '.join(names[:8])}"
        f"{', …' if len(names) > 8 else ''})"
    )
    return 0


def _new(args: argparse.Namespace) -> int:
    """Write a starter bot: NAME (a Python identifier) or a path ending in NAME.py; with
    ``--lang`` another language's starter kit, in the folder NAME."""
    if args.lang != "python":
        return _new_kit(args)
    path = Path(args.name)
    if path.suffix != ".py":
        path = path.with_name(path.name + ".py")
    stem = path.stem
    if not stem.isidentifier() or not stem.isascii():
        return _fail(f"{args.name!r}: a bot's name must be a Python identifier (my_bot, Ducker2)")
    if path.exists():
        return _fail(f"{path} exists; not overwriting it")
    if not path.parent.is_dir():
        return _fail(f"{path.parent} is not a folder")
    cls = "".join(part[:1].upper() + part[1:] for part in stem.split("_") if part) or "MyBot"
    path.write_text(STARTER.format(name=stem, cls=cls))
    command = "bidel" if Path(sys.argv[0]).name == "bidel" else "python -m bots_sdk"
    print(f"wrote {path}: try  {command} play {path} random random random")
    return 0


def _docker(args: argparse.Namespace) -> int:
    """Build the bots' image on the engine DOCKER_HOST names, or sweep its leftovers."""
    from bots_sdk.sandbox import containers

    try:
        if args.command == "docker-janitor":
            removed = containers.janitor_all() if args.all else containers.janitor()
            print(f"removed {removed} bot container(s)")
            return 0
        tag = containers.build_image(args.tag, args.base)
        containers.check()
    except containers.Unavailable as exc:
        print(f"bots_sdk: {exc}", file=sys.stderr)
        return 1
    print(f"built {tag} (SDK {containers.sdk_digest()}) on {containers.client().api.base_url}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """``engine verify`` from the SDK's command: a game or match record, refereed."""
    return engine_main(["verify", args.file])


def _compile(args: argparse.Namespace) -> int:
    """``compile``: the installed engine compiled in place (``bots_sdk.compile_engine``)."""
    if engine.BUILD.kind == "compiled" and not args.again:
        print(f"bidel: the engine is compiled already: {engine.BUILD}")
        return 0
    print(f"bidel: the engine runs {engine.BUILD}; compiling it (about a minute)", flush=True)
    try:
        build = compile_engine.compile_here(lambda line: print(f"  {line}", flush=True))
    except compile_engine.CompileFailed as exc:
        return _fail(str(exc))
    print(f"bidel: the engine is {build} from now on (bidel --version says so)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``bidel``: every command; a reader of its output that goes away early (``| head``)
    ends it quietly."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # (a reader gone away is found here, not at the interpreter's exit)
        return status
    except BrokenPipeError:
        return _reader_gone()


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="bidel",
        description="The Bidel bot SDK: write, play and check Hearts bots.",
        epilog=f"Built-in bots, usable by name wherever a bot is asked: {', '.join(BUILTIN)}.",
    )
    parser.add_argument(
        "--version",
        action=PrintVersion,
        version=f"bidel SDK {bots_sdk.__version__} (engine {engine.__version__}: {engine.BUILD})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play", help="play a match between bots (built-in names or files)")
    play.add_argument("bots", nargs="+", metavar="BOT")
    play.add_argument("--rules", default="standard", help="a preset name or a JSON rules object")
    play.add_argument("--seed", type=int, default=1)
    count = play.add_mutually_exclusive_group()
    count.add_argument("--games", type=int, help="games to the target score (default 1)")
    count.add_argument("--hands", type=int, help="a fixed number of hands instead of a game")
    play.add_argument(
        "--duplicate", action="store_true", help="replay each deal with the seats rotated"
    )
    play.add_argument("--jobs", type=int, default=1, help="games played in parallel")
    play.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    play.add_argument("--record", help="write every game record (JSON) to this file")
    play.add_argument("--move-time", type=float, default=1.0, help="seconds per move (default 1)")
    play.add_argument("--time-bank", type=float, default=10.0, help="seconds of bank per match")
    play.add_argument("--no-clock", action="store_true", help="no time limits")
    _sandbox_options(play)
    play.add_argument(
        "--allow-faults",
        action="store_true",
        help="exit 0 even when a bot file faulted (default: exit 1)",
    )
    checking = commands.add_parser(
        "check", help="run a bot file through every kind of decision and name its mistakes"
    )
    checking.add_argument(
        "bot", metavar="BOT", help="a bot file (.py, or a .zip with bot.py), or a kit's folder"
    )
    _sandbox_options(checking)
    replay_cmd = commands.add_parser("replay", help="show a recorded game trick by trick")
    replay_cmd.add_argument("file")
    replay_cmd.add_argument(
        "--game", type=int, default=1, help="which game of a match record, from 1"
    )
    new = commands.add_parser(
        "new", help="write a starter bot: NAME, or a path to NAME.py (--lang: a folder NAME)"
    )
    new.add_argument("name")
    new.add_argument(
        "--lang",
        choices=list(LANGUAGES),
        default="python",
        help="the bot's language (default python); the others get a starter kit folder",
    )
    packing = commands.add_parser(
        "pack", help="zip a bot's folder for upload: its manifest and sources, no build outputs"
    )
    packing.add_argument("folder")
    packing.add_argument("-o", "--output", help="default: FOLDER.zip beside the folder")
    check = commands.add_parser("verify", help="referee a game or match record (play --record)")
    check.add_argument("file", help="a JSON record, or - for standard input")
    image = commands.add_parser(
        "docker-image", help="build the bots' image for the docker sandbox on DOCKER_HOST's engine"
    )
    image.add_argument("--tag", help="default: $BIDEL_DOCKER_IMAGE or bidel-bot:latest")
    image.add_argument(
        "--base", help="an image with python3.11 (default python:3.11-slim-bookworm)"
    )
    compiling = commands.add_parser(
        "compile",
        help="compile this installed engine, once (the same games, faster); --version says "
        "which build runs",
    )
    compiling.add_argument(
        "--again", action="store_true", help="compile even when the compiled build is current"
    )
    sweep = commands.add_parser("docker-janitor", help="remove bot containers left behind")
    sweep.add_argument("--all", action="store_true", help="every bot container, even in use")
    remote_cli.add_commands(commands)  # the platform's: login, submit, status, …
    args = parser.parse_args(argv)
    if args.command in remote_cli.COMMANDS:
        return remote_cli.run(args)
    if args.command == "verify":
        return _verify(args)
    if args.command in ("docker-image", "docker-janitor"):
        return _docker(args)
    if args.command == "play":
        return _play(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "check":
        return _check(args)
    if args.command == "pack":
        return _pack(args)
    if args.command == "compile":
        return _compile(args)
    return _new(args)


__all__ = ["main", "GameState"]
