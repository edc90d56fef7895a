"""Hoards memory in anonymous files (memfd), which no address-space limit sees: 8 MB at a
time, reporting MEMFD <n> after each."""

import os
import sys

from bots_sdk import Bot, lowest


class MemfdHoard(Bot):
    def pass_cards(self, view):
        files = []
        block = b"x" * (8 * 1024 * 1024)
        try:
            for n in range(1, 200):
                fd = os.memfd_create(f"hoard{n}")
                os.write(fd, block)
                files.append(fd)
                print(f"MEMFD {n}", file=sys.stderr, flush=True)
        except OSError as exc:
            print(f"MEMFD STOPPED {exc}", file=sys.stderr, flush=True)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
