"""Fills its /tmp: first with empty files (inodes), then with bytes. Reports FILES <n> and
BYTES_MB <n>."""

import os
import sys

from bots_sdk import Bot, lowest


class TmpFiller(Bot):
    def pass_cards(self, view):
        os.makedirs("/tmp/many", exist_ok=True)
        n = 0
        try:
            while n < 200_000:
                open(f"/tmp/many/{n}", "w").close()
                n += 1
        except OSError as exc:
            print(f"FILES {n} {exc.strerror}", file=sys.stderr, flush=True)
        for name in os.listdir("/tmp/many"):
            os.unlink(f"/tmp/many/{name}")
        block, written = b"x" * (1024 * 1024), 0
        try:
            for i in range(1000):
                with open(f"/tmp/big{i}", "wb") as out:
                    out.write(block)
                written += 1
        except OSError as exc:
            print(f"BYTES_MB {written} {exc.strerror}", file=sys.stderr, flush=True)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
