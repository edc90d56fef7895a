"""``bidel login``, ``logout``, ``submit``, ``status``, ``matches``, ``logs``, ``fetch`` and
``reproduce``: the author's loop from the terminal to the platform and back
(docs/bots.md, "From your terminal to the platform").

Each takes ``--url`` (default ``BIDEL_URL``, else http://localhost:8000) and ``--json`` (one
JSON document on standard output, for scripts). Exit status: 0 done; 1 the bot is at fault
(a version rejected, an upload refused for what it holds, a trial lost, a reproduction that
faults or departs); 2 the command could not be carried out (bad usage, the platform
unreachable, a refused log-in or token, no such bot or match, another user's bot), with one
line on standard error saying why.
"""

from __future__ import annotations

import argparse
import getpass
import io
import json
import re
import socket
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bots_sdk.analysis import SAMPLES, Report, analyse_game, describe_report
from bots_sdk.builds import build
from bots_sdk.builds.languages import MANIFESTS, ManifestError
from bots_sdk.loader import BotLoadError
from bots_sdk.remote import (
    Platform,
    RemoteError,
    forget_login,
    platform_url,
    store_login,
    stored_login,
    token_for,
)
from bots_sdk.reproduce import BotRaised, RecordError, Reproduction, reproduce
from bots_sdk.sandbox import BACKENDS, SandboxUnavailable, default_launcher
from bots_sdk.tracebacks import as_uploaded, last_frame, own_frames, own_traceback

COMMANDS = (
    "signup",
    "login",
    "logout",
    "submit",
    "activate",
    "status",
    "matches",
    "logs",
    "fetch",
    "reproduce",
    "analyse",
)
#: What a validated upload leads to (``submit --activate``): as the platform names them.
ACTIVATIONS = ("now", "if-not-weaker", "never")
#: How long ``submit`` waits for a verdict unless told otherwise.
WAIT_SECONDS = 600.0


class Usage(Exception):
    """The command line asks for something that cannot be done (exit 2)."""


class BotAtFault(Exception):
    """The bot is at fault, found here before anything was sent (exit 1)."""


def add_commands(commands: Any) -> None:
    """The platform's commands, on ``bidel``'s subparsers."""

    def command(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, help=text, description=text)
        parser.add_argument(
            "--url", help="the platform (default: $BIDEL_URL, else http://localhost:8000)"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON document")
        return parser

    login = command("login", "log in to the platform and keep an API token for this URL")
    signup = command("signup", "make an account on the platform, then log in to it")
    for door in (login, signup):
        door.add_argument("--username", help="asked for when not given")
        door.add_argument(
            "--password-stdin", action="store_true", help="read the password from standard input"
        )
        door.add_argument("--name", help="what the token is called in your account's list")
    signup.add_argument("--email", help="optional: where a password reset is sent")
    command("logout", "forget (and revoke) the API token kept for this URL")
    submit = command("submit", "upload a bot as a new version and wait for its validation")
    submit.add_argument("path", help="a .py file, a .zip, or a bot's folder (packed as by pack)")
    submit.add_argument("--bot", required=True, help="the bot's name (yours)")
    submit.add_argument("--new", action="store_true", help="create the bot if you have none")
    submit.add_argument(
        "--ladder",
        action="append",
        default=[],
        metavar="L",
        help="a ladder (name or id) the bot enters; may repeat",
    )
    submit.add_argument(
        "--activate",
        choices=ACTIVATIONS,
        default="now",
        help="once validated: 'now' it replaces the version playing (the default); "
        "'if-not-weaker' it plays a comparison with it first and replaces it only if not "
        "found weaker and without a fault; 'never' it waits for bidel activate",
    )
    submit.add_argument("--no-wait", action="store_true", help="do not wait for the verdict")
    submit.add_argument(
        "--timeout", type=float, default=WAIT_SECONDS, help="seconds to wait for the verdict"
    )
    activate = command("activate", "choose which of a bot's validated versions plays")
    activate.add_argument("bot", metavar="BOT", help="your bot's name, or its id")
    activate.add_argument("version", type=int, metavar="VERSION", help="its number (v3: 3)")
    status = command("status", "your bots; or one bot's versions and ratings")
    status.add_argument("bot", nargs="?", metavar="BOT", help="a bot: your bot's name, or an id")
    matches = command("matches", "a bot's recent matches")
    matches.add_argument("bot", metavar="BOT")
    matches.add_argument("--version", type=int, help="only the matches this version played")
    matches.add_argument("--faults", action="store_true", help="only matches where it faulted")
    matches.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    logs = command("logs", "your seats of a match, decision by decision, with what they wrote")
    logs.add_argument("match", type=int, metavar="MATCH")
    logs.add_argument("--stderr", action="store_true", help="the whole stderr, as one text")
    fetch = command("fetch", "download a match's record (as play --record writes it)")
    fetch.add_argument("match", type=int, metavar="MATCH")
    fetch.add_argument("-o", "--output", help="default: match-MATCH.json")
    analyse = command(
        "analyse",
        "every play of a seat valued again from its own view: points lost, marked as in chess",
    )
    analyse.add_argument(
        "match", metavar="MATCH", help="a match's id on the platform, or a record file"
    )
    analyse.add_argument(
        "--seat", type=int, help="which seat, from 1 (default: your bot's, in a match of yours)"
    )
    analyse.add_argument(
        "--samples",
        type=int,
        default=SAMPLES,
        help=f"deals each play is valued on (default {SAMPLES}, as the platform's analysis)",
    )
    analyse.add_argument(
        "--platform",
        action="store_true",
        help="ask the platform's runners instead of computing here (kept there for everyone; "
        "a new one counts against your allowance): the same numbers",
    )
    analyse.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="with --platform: how long to wait for the runners (default 600)",
    )
    again = command(
        "reproduce", "play a match again locally: your seat runs code, the others replay"
    )
    again.add_argument("match", type=int, metavar="MATCH")
    again.add_argument(
        "--bot", help="the code to run at your seat (default: the version that played)"
    )
    again.add_argument("--seat", type=int, help="which seat, from 1, when several are yours")
    again.add_argument(
        "--sandbox", choices=list(BACKENDS), help="default: $BIDEL_SANDBOX or bubblewrap"
    )
    again.add_argument(
        "--unsafe-no-sandbox", action="store_true", help="run the bot without the sandbox"
    )
    again.add_argument(
        "--here",
        action="store_true",
        help="run your seat's code (Python) in this process, outside the sandbox: what it "
        "raises is raised here, with its traceback",
    )
    again.add_argument(
        "--pdb",
        action="store_true",
        help="as --here, and stop in the debugger where your code raises",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out one of :data:`COMMANDS`; every failure is one line and exit 2."""
    try:
        url = platform_url(args.url)
        platform = Platform(url, token_for(url))
        return int(HANDLERS[args.command](platform, args))
    except (RemoteError, Usage) as exc:
        print(f"bidel: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BotAtFault as exc:
        print(f"bidel: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        # An answer of the wrong shape (a list for an object, a field missing or of another
        # type): the platform's fault or another program at that address, never a traceback.
        said = one_line(f"{type(exc).__name__}: {exc}")[:200]
        print(
            f"bidel: the platform's answer is not what bidel expects ({said}): "
            "is --url a Bidel platform?",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("bidel: interrupted", file=sys.stderr)
        return 2


def one_line(text: str) -> str:
    """``text`` as one line of a terminal: a control character (a line break, an escape
    sequence a hostile server sent) shown as a space.

    >>> one_line("two\\nlines \\x1b[31mred")
    'two lines  [31mred'
    """
    return "".join(" " if not c.isprintable() else c for c in text)


def _out(args: argparse.Namespace, document: Any, text: str) -> None:
    print(json.dumps(document, indent=2) if args.json else text)


# --- login, logout ------------------------------------------------------------------------------


def _credentials(
    platform: Platform, args: argparse.Namespace, *, twice: bool = False
) -> tuple[str, str]:
    """The username and password: from the options and standard input, or asked for on the
    terminal (``twice``: a new password, typed again to be sure)."""
    username = args.username
    if not username:
        if args.password_stdin or not sys.stdin.isatty():
            raise Usage("give --username when the password comes from standard input")
        username = input("Username: ").strip()
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif not sys.stdin.isatty():
        raise Usage(
            "no terminal to ask for the password on: give it on standard input with "
            "--password-stdin"
        )
    else:
        password = getpass.getpass(f"Password for {username} at {platform.url}: ")
        if twice and getpass.getpass("The same password again: ") != password:
            raise Usage("the two passwords differ: nothing was done")
    if not username or not password:
        raise Usage("a username and a password are needed")
    return username, password


def _signup(platform: Platform, args: argparse.Namespace) -> int:
    """Make an account, then log in to it as ``login`` does."""
    username, password = _credentials(platform, args, twice=True)
    fields = {"username": username, "password": password}
    if args.email:
        fields["email"] = args.email
    platform.request("POST", "/api/users/", data=fields, auth=False)
    _say(args, f"signed up at {platform.url} as {username}")
    return _log_in(platform, args, username, password)


def _login(platform: Platform, args: argparse.Namespace) -> int:
    username, password = _credentials(platform, args)
    try:
        return _log_in(platform, args, username, password)
    except RemoteError as exc:
        if exc.status != 400:
            raise
        raise Usage(
            f"{exc}: no account yet? bidel signup --url {platform.url}; a forgotten password: "
            f"{platform.url}/password-reset/"
        ) from None


def _log_in(platform: Platform, args: argparse.Namespace, username: str, password: str) -> int:
    name = args.name or f"bidel on {_host()}"
    issued = platform.request(
        "POST",
        "/api/token/",
        data={"username": username, "password": password, "name": name[:64]},
        auth=False,
    ).json()
    earlier = stored_login(platform.url)
    store_login(
        platform.url,
        {
            "token": issued["token"],
            "id": issued.get("id"),
            "username": username,
            "name": issued.get("name", name),
            "expires": issued.get("expires"),
        },
    )
    if earlier and earlier.get("id") and earlier.get("token") != issued["token"]:
        _revoke(Platform(platform.url, earlier["token"]), earlier["id"])  # the one it replaces
    expires = str(issued.get("expires") or "")[:10]
    _out(
        args,
        {"url": platform.url, "username": username, "expires": issued.get("expires")},
        f"logged in to {platform.url} as {username}"
        + (f" (the token works until {expires}; bidel login renews it)" if expires else ""),
    )
    return 0


def _host() -> str:
    return socket.gethostname()[:40] or "this computer"


def _revoke(platform: Platform, token_id: Any) -> None:
    """Revoke a token on the platform, if it can be reached; forgetting it is what counts."""
    try:
        platform.request("DELETE", f"/api/tokens/{int(token_id)}/")
    except (RemoteError, ValueError, TypeError):
        pass


def _logout(platform: Platform, args: argparse.Namespace) -> int:
    earlier = stored_login(platform.url)
    if earlier and earlier.get("id"):
        _revoke(Platform(platform.url, earlier["token"]), earlier["id"])
    forgotten = forget_login(platform.url)
    _out(
        args,
        {"url": platform.url, "logged_out": forgotten},
        f"logged out of {platform.url}" if forgotten else f"not logged in to {platform.url}",
    )
    return 0


# --- submit -------------------------------------------------------------------------------------


def _upload_file(path: Path) -> tuple[str, bytes]:
    """What ``submit`` sends: a .py or .zip as it is, a folder packed as ``pack`` packs it."""
    if path.is_dir():
        try:
            data = build.pack(path)
        except ManifestError as exc:
            raise Usage(str(exc)) from None
        if len(data) > build.MAX_PACKED:
            raise Usage(
                f"the packed bot is {len(data)} bytes; the platform takes {build.MAX_PACKED}"
            )
        return f"{path.resolve().name}.zip", data
    if not path.is_file():
        raise Usage(f"no bot file or folder {str(path)!r}")
    if path.suffix.lower() not in (".py", ".zip"):
        raise Usage(f"{path.name}: submit a .py file, a .zip or a bot's folder")
    data = path.read_bytes()
    _uploadable(path.name, data)
    return path.name, data


def _uploadable(name: str, data: bytes) -> None:
    """What the platform would refuse in the file itself, found before sending it: Python
    that does not compile, a zip that is none or holds no bot (:class:`BotAtFault`)."""
    if name.lower().endswith(".py"):
        try:
            compile(data, name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise BotAtFault(
                f"{name}: syntax error on line {exc.lineno}: {exc.msg} (nothing was uploaded)"
            ) from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise BotAtFault(f"{name} does not compile: {exc} (nothing was uploaded)") from None
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise BotAtFault(f"{name} is not a zip file (nothing was uploaded)") from None
    if "bot.py" not in names and not any(Path(n).name in MANIFESTS for n in names):
        raise BotAtFault(
            f"{name} holds neither bot.py at its root nor a kit's manifest "
            f"({', '.join(MANIFESTS)}): nothing was uploaded"
        )


def _submit(platform: Platform, args: argparse.Namespace) -> int:
    filename, data = _upload_file(Path(args.path))
    bot = platform.my_bot(args.bot)
    ladders = [platform.ladder(name)["name"] for name in args.ladder]
    if bot is None:
        _not_anothers(platform, args.bot)
        if not args.new:
            raise Usage(f"you have no bot named {args.bot!r}: add --new to create it")
        fields: dict[str, Any] = {"name": args.bot}
        if ladders:
            fields["join_ladders"] = ladders
        bot = platform.post("/api/bots/", fields)
        _say(args, f"created the bot {bot['name']} (id {bot['id']})")
    else:
        for name in ladders:
            ladder = platform.ladder(name)
            platform.post(f"/api/ladders/{ladder['id']}/entries/", {"bot": bot["id"]})
    taken: dict[str, Any] | None = None  # (the platform's answer: the upload was taken)
    try:  # (one block: a Ctrl-C anywhere after the answer came knows the upload was taken)
        try:
            answer = platform.request(
                "POST",
                f"/api/bots/{bot['id']}/versions/",
                data={"activate": args.activate},
                file=(filename, data),
            ).json()
        except RemoteError as exc:
            if exc.status not in REFUSED_UPLOAD:
                raise
            # the upload itself is too large: the bot's to fix, not the platform's
            raise BotAtFault(f"{filename} was refused: {exc}") from None
        if not isinstance(answer, dict):
            raise RemoteError("the platform's answer to the upload is not a version")
        taken = answer
        return _follow(platform, args, bot, taken, len(data))
    except KeyboardInterrupt:
        if taken is None:
            raise Usage(
                f"interrupted during the upload: it may have been taken; bidel status "
                f"{bot['name']} tells"
            ) from None
        raise Usage(
            f"stopped waiting: {bot['name']} v{taken.get('number', '?')} was uploaded and goes "
            f"on without bidel; bidel status {bot['name']} follows it"
        ) from None


def _follow(
    platform: Platform,
    args: argparse.Namespace,
    bot: dict[str, Any],
    version: dict[str, Any],
    size: int,
) -> int:
    """After an upload was taken: its verdict, waited for unless ``--no-wait``."""
    number = version["number"]
    label = f"{bot['name']} v{number}"
    left = version.get("uploads_left")
    if args.no_wait:
        if isinstance(left, dict):
            _say(args, _left(bot["name"], left))
        _out(args, _verdict(bot, version), f"uploaded {label}: {version['status']}")
        return 0
    _say(args, f"uploaded {label} ({size} bytes); waiting for its validation")
    if isinstance(left, dict):
        _say(args, _left(bot["name"], left))
    version = _wait(platform, bot, number, args)
    document = _verdict(bot, version)
    if version["status"] == "active":
        _out(args, document, f"{label} is active")
        return 0
    if version["status"] == "rejected":
        _out(args, document, f"{label} was rejected: {_reason(version)}")
        return 1
    if version["status"] == "retired" and args.activate == "never":
        _out(
            args,
            document,
            f"{label} passed its validation; bidel activate {bot['name']} {number} makes it play",
        )
        return 0
    if version["status"] == "retired":  # a trial that did not make it active
        _out(args, document, f"{label} was not made active: {_last_line(version)}")
        return 1
    raise RemoteError(
        f"{label} is still {version['status']} after {args.timeout:.0f} s: "
        f"see bidel status {bot['name']}"
    )


def _left(name: str, left: dict[str, Any]) -> str:
    """What the platform's allowance of uploads has left, in a line.

    >>> _left("x", {"bot": {"left": 9, "rate": "10/hour"}, "user": {"left": 19,
    ...     "rate": "20/hour"}, "failed": {"left": 20, "rate": "20/hour"}})
    'left: 9 new versions of x (10/hour), 19 of all your bots (20/hour); 20 failed tries (20/hour)'
    """

    def part(key: str) -> tuple[Any, Any]:
        entry = left.get(key)
        if not isinstance(entry, dict):
            return "?", "?"
        return entry.get("left", "?"), entry.get("rate", "?")

    (bot, bot_rate), (user, user_rate), (failed, failed_rate) = map(part, ("bot", "user", "failed"))
    return one_line(
        f"left: {bot} new versions of {name} ({bot_rate}), {user} of all your bots "
        f"({user_rate}); {failed} failed tries ({failed_rate})"
    )


#: The statuses of an upload the platform refused for what it holds (too large): exit 1, as
#: a rejected version, not 2. (A file that is not Python or not a bot's zip never leaves:
#: :func:`_uploadable`; the platform's other refusals, its limits, are 400s and exit 2.)
REFUSED_UPLOAD = (413,)


def _not_anothers(platform: Platform, name: str) -> None:
    """Refuse, saying so, a bot name that is another user's (bot names are the platform's,
    one of each)."""
    for bot in platform.get("/api/bots/", search=name).get("results", []):
        if str(bot.get("name", "")).lower() == name.lower():
            raise Usage(
                f"the bot {bot['name']!r} is {bot.get('owner') or 'another user'}'s, not yours: "
                "name one of yours (bidel status lists them), or a new name with --new"
            )


def _last_line(version: dict[str, Any]) -> str:
    lines = [line for line in str(version.get("validation_log") or "").splitlines() if line]
    return lines[-1] if lines else "no reason was given"


def _activate(platform: Platform, args: argparse.Namespace) -> int:
    bot = platform.my_bot(args.bot)
    if bot is None:
        raise Usage(f"you have no bot named {args.bot!r}")
    version = platform.post(f"/api/bots/{bot['id']}/activate/", {"version": args.version})
    _out(args, _verdict(bot, version), f"{bot['name']} v{version['number']} is active")
    return 0


def _say(args: argparse.Namespace, text: str) -> None:
    """A line for the person, kept off standard output under ``--json``."""
    print(text, file=sys.stderr if args.json else sys.stdout, flush=True)


def _wait(
    platform: Platform, bot: dict[str, Any], number: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Poll the version until it is active or rejected (or the time is up), with a progress
    line on a terminal."""
    started = time.monotonic()
    pause = 0.5
    tty = sys.stderr.isatty()
    while True:
        version = dict(platform.get(f"/api/bots/{bot['id']}/versions/{number}/"))
        waited = time.monotonic() - started
        if version["status"] in ("active", "rejected", "retired") or waited >= args.timeout:
            # (a candidate waits for its trial: active, or retired saying why)
            if tty:
                sys.stderr.write("\r\033[K")
            return version
        if tty:
            sys.stderr.write(f"\r{version['status']}… {waited:.0f} s")
            sys.stderr.flush()
        time.sleep(min(pause, max(0.0, args.timeout - waited)))
        pause = min(pause * 1.5, 3.0)


def _reason(version: dict[str, Any]) -> str:
    """The validation log's verdict: its lines after the first, or the whole log."""
    log = str(version.get("validation_log") or "").strip()
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return " / ".join(lines[:6]) if lines else "no reason was given"


def _verdict(bot: dict[str, Any], version: dict[str, Any]) -> dict[str, Any]:
    return {
        "bot": {"id": bot["id"], "name": bot["name"]},
        "version": version["number"],
        "status": version["status"],
        "validation_log": version.get("validation_log", ""),
    }


# --- status, matches ------------------------------------------------------------------------------


def _status(platform: Platform, args: argparse.Namespace) -> int:
    if not args.bot:
        bots = [platform.bot(str(b["id"])) for b in platform.me()["bots"]]
        rows = [
            f"{b['name']:<24} id {b['id']:<6} active version: "
            f"{'v' + str(b['active_version']) if b['active_version'] else 'none'}"
            + ("  (retired)" if b.get("retired_at") else "")
            for b in bots
        ]
        _out(args, {"bots": bots}, "\n".join(rows) or "you have no bots yet: bidel submit")
        return 0
    bot = platform.bot(args.bot)
    versions = list(platform.pages(f"/api/bots/{bot['id']}/versions/"))
    ladders = []
    for ladder in platform.pages("/api/ladders/"):
        rows = platform.get(f"/api/ladders/{ladder['id']}/rankings/")
        mine = [row for row in rows if (row.get("bot") or {}).get("id") == bot["id"]]
        if mine:
            ladders.append({"ladder": ladder["name"], "rankings": mine})
    lines = [f"{bot['name']} (id {bot['id']}, by {bot['owner']})"]
    if bot.get("notice"):
        lines.append(f"notice: {bot['notice']}")
    lines.append("versions:")
    for version in versions:
        lines.append(
            f"  v{version['number']:<4} {version['status']:<10} {version['created_at'][:19]}  "
            f"{version['filename']}  sha256 {version['sha256'][:12]}"
        )
        for rating in version.get("ratings") or []:
            lines.append(f"        {rating['ladder']}: {_rating(rating)}")
    for entry in ladders:
        lines.append(f"ladder {entry['ladder']}:")
        for row in entry["rankings"]:
            lines.append("  " + _ranking(row))
    compared = list(platform.pages(f"/api/bots/{bot['id']}/comparisons/", limit=5))
    if compared:
        lines.append("comparisons (newest first):")
    for comparison in compared:
        said = comparison["verdict"] or f"v{comparison['newer']} against v{comparison['older']}"
        lines.append(f"  {said}" + (" (running)" if comparison["status"] == "running" else ""))
    document = {"bot": bot, "versions": versions, "ladders": ladders, "comparisons": compared}
    _out(args, document, "\n".join(lines))
    return 0


def _rating(row: dict[str, Any]) -> str:
    """A rating, its 95% interval and the matches behind it, in words.

    >>> _rating({"rating": 1612.4, "ci95": [1480.0, 1744.9], "matches": 3, "provisional": True})
    '1612 [1480, 1745] over 3 matches, provisional'
    """
    low, high = row.get("ci95") or (None, None)
    interval = f" [{low:.0f}, {high:.0f}]" if low is not None else ""
    mark = ", provisional" if row.get("provisional") else ""
    return f"{row['rating']:.0f}{interval} over {row.get('matches', 0)} matches{mark}"


def _ranking(row: dict[str, Any]) -> str:
    version = f"v{row['version']}" if row.get("version") else "—"
    if row.get("rating") is None:
        return f"{version}: not rated yet"
    rated = row.get("rated_version")
    whose = (
        f" (v{rated}'s: v{row['version']} has not been rated yet)"
        if rated != row.get("version") and rated
        else ""
    )
    return f"{version}: rank {row.get('rank')}, rating {_rating(row)}{whose}"


def _matches(platform: Platform, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise Usage("--limit must be 1 or more")
    bot = platform.bot(args.bot)
    query: dict[str, Any] = {"bot": bot["id"]}
    if args.version is not None:
        query["version"] = args.version
    rows = []
    for match in platform.pages("/api/matches/", **query):
        own = [s for s in match["seats"] if (s.get("bot") or {}).get("id") == bot["id"]]
        if args.version is not None and not any(s.get("version") == args.version for s in own):
            continue
        if args.faults and not any(s.get("faults") for s in own):
            continue
        rows.append(match)
        if len(rows) >= args.limit:
            break
    lines = [_match_line(match, bot["id"]) for match in rows]
    _out(args, {"bot": bot["id"], "matches": rows}, "\n".join(lines) or "no matches")
    return 0


def _match_line(match: dict[str, Any], bot_id: int) -> str:
    when = str(match.get("finished_at") or match.get("created_at") or "")[:16].replace("T", " ")
    seats = []
    faults = 0
    for seat in match["seats"]:
        name = seat["bot"]["name"] + (f" v{seat['version']}" if seat.get("version") else "")
        if seat["bot"].get("id") == bot_id:
            name = f"*{name}"
            faults += len(seat.get("faults") or [])
        rank = f"#{seat['rank']}" if seat.get("rank") else ""
        score = "" if seat.get("score") is None else f" {seat['score']}"
        seats.append(f"{name} {rank}{score}".strip())
    fault_text = f"  faults: {faults}" if faults else ""
    return (
        f"{match['id']:>7}  {match['kind']:<10} {match['status']:<9} {when:<16}  "
        + ", ".join(seats)
        + fault_text
    )


# --- logs, fetch, reproduce -------------------------------------------------------------------


def _logs(platform: Platform, args: argparse.Namespace) -> int:
    platform.me()  # (logged in: the logs are the owner's)
    seats = platform.get(f"/api/matches/{args.match}/logs/")["seats"]
    if not seats:
        raise Usage(f"none of match {args.match}'s seats is one of your bots")
    lines = []
    for seat in seats:
        version = f" v{seat['version']}" if seat.get("version") else ""
        lines.append(f"seat {seat['seat'] + 1} ({seat['bot']}{version}):")
        steps = seat.get("decisions") or []
        if steps and not args.stderr:
            lines.extend(timeline(steps))
            faults = seat.get("faults") or []
            lines.extend(faults_said(faults))
            if any(isinstance(f, dict) and f.get("class") == "crash" for f in faults):
                frames = own_frames(str(seat.get("stderr") or ""))  # (the crash's traceback)
                lines.extend(f"    | {one_line(as_uploaded(line))}" for line in frames)
            continue
        text = str(seat.get("stderr") or "").rstrip("\n")
        lines.extend(f"  {line}" for line in text.splitlines() or ["(it wrote nothing)"])
    _out(args, {"match": args.match, "seats": seats}, "\n".join(lines))
    return 0


def timeline(steps: list[dict[str, Any]]) -> list[str]:
    """A seat's decisions as a person reads them (hands and tricks from 1): where, what it
    played, the time charged and the bank left, a fault where one happened, and the lines it
    wrote to stderr while deciding.

    >>> for line in timeline([{"hand": 0, "trick": 2, "decision": "play", "action": "QS",
    ...                        "ms": 12.5, "bank_ms": 9800.0, "log": "thinking\\nsure"},
    ...                       {"hand": 1, "trick": None, "decision": "pass", "action": ["2C"],
    ...                        "ms": None, "bank_ms": 0.0, "fault": "timeout"}]):
    ...     print(line)
      hand 1 trick 3  play  QS          12.5 ms  bank 9.80 s
          | thinking
          | sure
      hand 2          pass  2C                —  bank 0.00 s  FAULT timeout
    """
    lines = []
    for step in steps:
        where = f"hand {int(step.get('hand') or 0) + 1}"
        if step.get("trick") is not None:
            where += f" trick {int(step['trick']) + 1}"
        action = step.get("action")
        played = " ".join(map(str, action)) if isinstance(action, list) else str(action)
        ms = step.get("ms")
        spent = "—" if ms is None else f"{ms:.1f} ms"
        bank = step.get("bank_ms")
        left = "" if bank is None else f"  bank {bank / 1000:.2f} s"
        fault = f"  FAULT {step['fault']}" if step.get("fault") else ""
        lines.append(
            f"  {where:<15} {step.get('decision', ''):<5} {played:<9} {spent:>9}{left}{fault}"
        )
        for said in str(step.get("log") or "").splitlines():
            lines.append(f"      | {said}")
    return lines


def faults_said(faults: list[Any]) -> list[str]:
    """A seat's faults with what the bot said (hands from 1), as its owner reads them.

    >>> faults_said([{"class": "crash", "detail": "the bot reported a crash", "hand": 2,
    ...               "decision": "play", "said": "ValueError: no card"}])
    ['  FAULT crash in hand 3 (play): ValueError: no card']
    """
    lines = []
    for fault in faults:
        if not isinstance(fault, dict):
            continue
        where = f" in hand {int(fault['hand']) + 1}" if isinstance(fault.get("hand"), int) else ""
        decision = f" ({fault['decision']})" if fault.get("decision") else ""
        said = fault.get("said") or fault.get("detail", "")  # (Fault.owner_text)
        text = f"FAULT {fault.get('class')}{where}{decision}: {said}"
        lines.append(f"  {one_line(text)}")  # (no control character reaches the terminal)
    return lines


def match_record(platform: Platform, match_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The match and its record in ``bidel play --record``'s form: one game, each seat named
    as the platform names it, the caller's seats with what they wrote to stderr."""
    try:
        match = dict(platform.get(f"/api/matches/{match_id}/"))
    except RemoteError as exc:
        if exc.status == 404:
            raise RemoteError(f"no match {match_id} on {platform.url}", 404) from None
        raise
    if match["status"] != "finished":
        raise RemoteError(f"match {match_id} is {match['status']}: it has no record yet", 404)
    game = dict(platform.get(f"/api/matches/{match_id}/record/"))
    own: dict[int, str] = {}
    own_faults: dict[int, list[Any]] = {}  # (with what the bot said: its owner's to read)
    if platform.token:
        for seat in platform.get(f"/api/matches/{match_id}/logs/")["seats"]:
            own[int(seat["seat"])] = str(seat.get("stderr") or "")
            if isinstance(seat.get("faults"), list):
                own_faults[int(seat["seat"])] = seat["faults"]
    names = []
    seats = []
    given = game.get("seats")
    recorded: list[Any] = given if isinstance(given, list) else []
    for number, seat in enumerate(match["seats"]):
        name = seat["bot"]["name"] + (f" v{seat['version']}" if seat.get("version") else "")
        names.append(name)
        entry = dict(recorded[number]) if number < len(recorded) else {}
        faults = own_faults.get(number, entry.get("faults", seat.get("faults") or []))
        entry.update(bot=name, faults=faults)
        entry.setdefault("move_ms", [])
        entry.setdefault("replaced_by_fallback", False)
        entry["stderr"] = own.get(number, "")
        seats.append(entry)
    game["seats"] = seats
    record = {
        "rules": game.get("rules"),
        "seed": game.get("seed"),
        "bots": names,
        "duplicate": False,
        "games": [game],
        "match": {"id": match["id"], "kind": match["kind"], "url": platform.url},
    }
    return match, record


def _fetch(platform: Platform, args: argparse.Namespace) -> int:
    _, record = match_record(platform, args.match)
    out = Path(args.output or f"match-{args.match}.json")
    out.write_text(json.dumps(record, indent=1) + "\n")
    hands = len(record["games"][0].get("hands") or [])
    _out(
        args,
        {"match": args.match, "file": str(out)},
        f"wrote {out}: match {args.match}, {hands} hands, {', '.join(record['bots'])}",
    )
    return 0


def _reproduce(platform: Platform, args: argparse.Namespace) -> int:
    """Exit 0: the match again, decision for decision; 1: the bot is at fault (it faults
    again, or raises) or departs from the record; 2: it could not be played again."""
    mine = {bot["id"] for bot in platform.me()["bots"]}
    match, record = match_record(platform, args.match)
    yours = [s for s in match["seats"] if (s.get("bot") or {}).get("id") in mine]
    if args.seat is not None:
        yours = [s for s in yours if s["seat"] == args.seat - 1]
        if not yours:
            raise Usage(f"seat {args.seat} of match {args.match} is not one of your bots")
    if not yours:
        raise Usage(f"none of match {args.match}'s seats is one of your bots")
    seat = yours[0]
    here = args.here or args.pdb
    launcher = None
    if not here:
        try:
            launcher = default_launcher(args.unsafe_no_sandbox, None, args.sandbox)
        except SandboxUnavailable as exc:
            raise Usage(
                f"cannot sandbox the bot here: {exc} (or --here, to run it in this process)"
            ) from None
    with tempfile.TemporaryDirectory(prefix="bidel-reproduce-") as folder:
        if args.bot:
            code = Path(args.bot)
            if not code.exists():
                raise Usage(f"no bot file or folder {args.bot!r}")
            shown = args.bot
            source = f"{code}"
        else:
            code = _download(platform, seat, Path(folder))
            shown = code.name
            source = f"{seat['bot']['name']} v{seat['version']}, as it played ({code.name})"
        # (on standard error: standard output is the answer alone)
        where = "in this process, outside the sandbox" if here else "in the sandbox"
        print(f"match {args.match}, seat {seat['seat'] + 1}: {source}, {where}", file=sys.stderr)
        try:
            result = reproduce(record, seat=seat["seat"], bot=code, launcher=launcher, here=here)
        except RecordError as exc:
            raise RemoteError(str(exc)) from None
        except BotLoadError as exc:
            raise Usage(f"cannot run it in this process: {exc}") from None
        except BotRaised as exc:
            return _raised(args, exc, code, shown)
        frames = [_shown(line, code, shown) for line in own_frames(result.stderr)]
    document = {"match": args.match, "seat": seat["seat"], **result.to_dict()}
    if result.faulted and frames:  # its own traceback, as the sandboxed process printed it
        print("\n".join(f"  | {line}" for line in frames), file=sys.stderr)
        document["traceback"] = frames
    _out(args, document, result.describe())
    return 0 if result.identical and not result.faulted else 1


def _analyse(platform: Platform, args: argparse.Namespace) -> int:
    """Exit 0 with the analysis (a table, or ``--json`` the platform's document); 2 when the
    match or the seat cannot be found."""
    if args.samples < 2:
        raise Usage("--samples must be at least 2 (an interval needs two)")
    if Path(args.match).is_file():
        try:
            record = json.loads(Path(args.match).read_text())
        except (OSError, ValueError) as exc:
            raise Usage(f"cannot read the record {args.match!r}: {exc}") from None
        if args.seat is None:
            raise Usage("which seat? --seat N (from 1)")
        seat, where = args.seat - 1, args.match
    else:
        match_id = _match_id(args.match)
        match, record = match_record(platform, match_id)
        if args.seat is not None:
            seat = args.seat - 1
        else:
            mine = {bot["id"] for bot in platform.me()["bots"]} if platform.token else set()
            yours = [s for s in match["seats"] if (s.get("bot") or {}).get("id") in mine]
            if not yours:
                raise Usage(f"which seat of match {match_id}? --seat N (from 1)")
            seat = yours[0]["seat"]
        where = f"match {match_id}"
        if args.platform:
            report = _analysis_from_platform(platform, match_id, seat, args)
            _out(args, report.to_dict(), describe_report(report, where))
            return 0
    if args.platform:
        raise Usage("--platform analyses a match on the platform: give its id, not a file")
    try:
        report = analyse_game(record, seat, samples=args.samples)
    except (RecordError, ValueError, KeyError, TypeError) as exc:
        raise Usage(f"cannot analyse {where}: {exc}") from None
    _out(args, report.to_dict(), describe_report(report, where))
    return 0


def _analysis_from_platform(
    platform: Platform, match_id: int, seat: int, args: argparse.Namespace
) -> Report:
    """The platform's analysis of a seat: asked for (or read, when someone did), then read
    again until the runners have made it or ``--wait`` seconds have passed."""
    path = f"/api/matches/{match_id}/analysis/{seat}/"
    document = platform.post(path, {"samples": args.samples})
    deadline = time.monotonic() + args.wait
    pause = 0.5
    while document.get("status") == "queued":
        if time.monotonic() > deadline:
            raise RemoteError(
                f"the platform has not analysed match {match_id} within {args.wait:g} s: "
                "it is queued there (run this again later: it will not be counted twice)"
            )
        time.sleep(pause)  # (a poll of a remote job: nothing to wait on but its answer)
        pause = min(pause * 1.5, 5.0)
        document = platform.get(path, samples=args.samples)
    if document.get("status") != "done":
        raise RemoteError(f"the platform could not analyse it: {document.get('error', '')}")
    try:
        return Report.from_dict(document)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RemoteError(f"the platform's analysis is not a report: {exc!r}") from None


def _match_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise Usage(f"no record file {text!r}, and not a match id") from None


def _raised(args: argparse.Namespace, raised: BotRaised, code: Path, shown: str) -> int:
    """The bot raised, run here: its own traceback and where, then the debugger (--pdb)."""
    frames = [_shown(line, code, shown) for line in own_traceback(raised.error)]
    print("\n".join(f"  | {line}" for line in frames), file=sys.stderr)
    place = last_frame(frames)
    error = raised.error
    said = f"{type(error).__name__}: {error}"
    document = {
        "match": args.match,
        "seat": raised.where.seat,
        **Reproduction(False, 0, raised.where).to_dict(),
        "raised": {"type": type(error).__name__, "message": str(error), "at": place},
        "traceback": frames,
    }
    was = f" (in the match: {raised.where.recorded_fault})" if raised.where.recorded_fault else ""
    text = f"{raised.where.where()}: the bot raises {one_line(said)}" + (
        f" at {place}" if place else ""
    )
    _out(args, document, text + was)
    if args.pdb:
        import pdb  # (here: only a debugging session pays for it)

        pdb.post_mortem(error.__traceback__)
    return 1


def _shown(line: str, code: Path, shown: str) -> str:
    """A traceback's line with the bot's path where it ran (in the sandbox, or in a temporary
    folder) as the author knows it."""
    return (
        line.replace(str(code.resolve()), shown)
        .replace(str(code), shown)
        .replace(f"/bot/{code.name}", shown)
    )


def _download(platform: Platform, seat: dict[str, Any], folder: Path) -> Path:
    """The code of the version that sat at ``seat`` (its owner's to download), under the
    name it was uploaded with, so that its traceback names the author's own file."""
    bot, number = seat["bot"]["id"], seat["version"]
    answer = platform.request("GET", f"/api/bots/{bot}/versions/{number}/code/")
    uploaded = str(platform.get(f"/api/bots/{bot}/versions/{number}/").get("filename", ""))
    suffix = ".zip" if uploaded.lower().endswith(".zip") else ".py"  # (what runs it says)
    name = Path(uploaded.replace("\\", "/")).name
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}", name) or not name.endswith(suffix):
        name = f"bot-v{number}{suffix}"  # (a name the server chose is never a path here)
    path = folder / name
    path.write_bytes(answer.body)
    return path


HANDLERS: dict[str, Callable[[Platform, argparse.Namespace], int]] = {
    "signup": _signup,
    "login": _login,
    "logout": _logout,
    "submit": _submit,
    "activate": _activate,
    "status": _status,
    "matches": _matches,
    "logs": _logs,
    "fetch": _fetch,
    "reproduce": _reproduce,
    "analyse": _analyse,
}
