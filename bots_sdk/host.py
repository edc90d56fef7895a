"""The bot side of the protocol: loads one bot and answers the referee, line by line.

Run by the match runner (inside the sandbox), never by authors:
``python -m bots_sdk.host BOT [WORKDIR]`` (``WORKDIR``: where the bot may write, default
``/tmp``). Errors in the bot are reported as ``error``
messages with their class, then the host exits.
"""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO, NoReturn

from bots_sdk.bot import Bot
from bots_sdk.loader import load_bot
from bots_sdk.protocol import (
    DECISION_METHODS,
    MAX_NAME,
    VERSION,
    ProtocolError,
    as_sent,
    clean_text,
    decode_trusted,
    encode,
)
from bots_sdk.runtime import THREADS
from bots_sdk.view import View
from engine.rules import RuleSet


def _send(out: BinaryIO, message: dict[str, Any]) -> None:
    out.write(encode(message))
    out.flush()


def missing_methods(bot: Bot, rules_spec: Any) -> str:
    """What the bot lacks that these rules will call ('' when nothing)."""
    try:
        rules = RuleSet.from_spec(rules_spec)
    except Exception:  # noqa: BLE001 — the referee's rules: it checked them
        return ""
    passes = rules.pass_count > 0 and any(d != "hold" for d in rules.pass_cycle)
    if passes and type(bot).pass_cards is Bot.pass_cards:
        return (
            f"{type(bot).__name__} does not define pass_cards(self, view), and these rules "
            "pass cards"
        )
    return ""


def serve(source: str, inp: BinaryIO, out: BinaryIO, workdir: str) -> int:
    """Answer the referee until ``bye`` or end of input; returns the exit status."""
    bot: Bot | None = None
    for line in inp:
        try:
            message = decode_trusted(line)
        except ProtocolError as exc:
            _send(out, {"type": "error", "class": "protocol", "detail": str(exc)})
            return 2
        kind = message["type"]
        try:
            if kind == "hello":
                if message.get("protocol") != VERSION:
                    _send(out, {"type": "error", "class": "protocol", "detail": "protocol version"})
                    return 2
                bot = load_bot(source, seed=int(message.get("seed", 0)), extract_to=workdir)
                missing = missing_methods(bot, message.get("rules", "standard"))
                if missing:
                    _send(out, {"type": "error", "class": "crash", "detail": missing})
                    return 1
                name = clean_text(str(bot.name or type(bot).__name__), MAX_NAME)
                _send(out, {"type": "ready", "name": name})
            elif kind == "act" and bot is not None:
                view = View.from_dict(message["view"])
                method = getattr(bot, DECISION_METHODS[message["decision"]])
                # Whatever the bot returned, send the shape the protocol allows: a wrong
                # answer is then the rules' to judge (an `illegal` fault), not a `protocol` one.
                answer = as_sent(method(view))
                _send(out, {"type": "action", "id": message["id"], "action": answer})
            elif kind in ("hand_end", "game_end") and bot is not None:
                view = View.from_dict(message["view"])
                (bot.on_hand_end if kind == "hand_end" else bot.on_game_end)(view)
            elif kind == "bye":
                return 0
            else:
                _send(out, {"type": "error", "class": "protocol", "detail": f"unexpected {kind!r}"})
                return 2
        except MemoryError:
            _send(out, {"type": "error", "class": "memory", "detail": "MemoryError"})
            return 3
        except Exception as exc:  # the bot's own bug: report it, the referee decides
            import traceback  # (here: the start-up of a bot that never fails need not pay)

            traceback.print_exc(file=sys.stderr)
            detail = clean_text(f"{type(exc).__name__}: {exc}")  # (the traceback is on stderr)
            _send(out, {"type": "error", "class": "crash", "detail": detail})
            return 1
    return 0


#: The largest bot a warm container accepts on its input (an upload is capped far below).
MAX_RECEIVED = 8 * 1024 * 1024


def _read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(65536, size - len(data)))
        if not chunk:
            raise EOFError(f"input ended after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def receive(workdir: str = "/tmp") -> int:
    """A warm container's entry point: wait for the bot on standard input (one line
    ``SIZE NAME`` then SIZE bytes of code), write it under ``workdir`` and serve it on the same
    input. Reads with ``os.read`` so nothing after the code is taken from the protocol."""
    header = bytearray()
    while not header.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte or len(header) > 300:
            print("bots_sdk.host: no bot received", file=sys.stderr)
            return 2
        header += byte
    size_text, _, name = header.decode("ascii", errors="replace").strip().partition(" ")
    if not size_text.isdigit() or int(size_text) > MAX_RECEIVED:
        print(f"bots_sdk.host: bad header {bytes(header)[:80]!r}", file=sys.stderr)
        return 2
    name = "".join(c for c in name if c.isalnum() or c in "._-")[:64]
    if not name.endswith((".py", ".zip")) or name.startswith("."):
        name = "bot.py"
    path = os.path.join(workdir, name)
    with open(path, "wb") as written:
        written.write(_read_exactly(0, int(size_text)))
    return main([path, workdir])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    os.environ.update(THREADS)  # before the bot imports numpy (bots_sdk.runtime)
    if not args:
        print("usage: python -m bots_sdk.host BOT", file=sys.stderr)
        return 2
    workdir = args[1] if len(args) > 1 else "/tmp"
    # The protocol owns the real stdout; a bot's print() goes to stderr.
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    return serve(args[0], sys.stdin.buffer, protocol_out, workdir)


def leave(code: int) -> NoReturn:
    """End the bot's process with ``code`` at once, its output flushed: the interpreter's
    teardown (some 10 ms of CPU a bot, which no clock but the platform's pays) is skipped.
    Nothing of the bot's runs there: its hooks were called before ``bye``."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001, S110 — a closed stream has nothing left to flush
            pass
    os._exit(code)


if __name__ == "__main__":
    leave(main())
