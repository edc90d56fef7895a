"""Tries the network, other files, the environment, and reports on stderr; plays low."""

import os
import socket
import sys

from bots_sdk import Bot, lowest


def attempt(label, action):
    try:
        result = action()
        print(f"{label}: OPEN {str(result)[:60]!r}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001
        print(f"{label}: DENIED {type(exc).__name__}", file=sys.stderr)


class Snoop(Bot):
    def pass_cards(self, view):
        attempt("redis", lambda: socket.create_connection(("127.0.0.1", 6379), timeout=2))
        attempt(
            "interfaces",
            lambda: sorted(
                line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]
            ),
        )
        attempt("routes", lambda: open("/proc/net/route").read().splitlines()[1:])
        attempt("shadow", lambda: open("/etc/shadow").read())
        attempt("passwd", lambda: open("/etc/passwd").read())
        attempt("pid1-environ", lambda: open("/proc/1/environ", "rb").read())
        attempt("self-environ", lambda: open("/proc/self/environ", "rb").read())
        print(f"environ: {sorted(os.environ)}", file=sys.stderr)
        print(f"SECRET_KEY={'SECRET_KEY' in os.environ}", file=sys.stderr)
        for path in sys.argv[1:2] + ["/work", "/root", "/home", "/var/lib/postgresql"]:
            attempt(f"list {path}", lambda path=path: os.listdir(path))
        attempt("write-outside", lambda: open("/sdk/bots_sdk/owned.py", "w").write("x"))
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
