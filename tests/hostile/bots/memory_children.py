"""Five children each hold 100 MB at once: with a 256 MB limit per bot, no more than two may
(each one alone is under its per-process limit). Reports HELD <n>: the children still alive,
each holding its 100 MB, once all have tried — however long that takes on a busy machine
(each child says it holds its share, or dies, and then closes its end of the pipe)."""

import os
import sys
import time

from bots_sdk import Bot, lowest

CHUNK = 100 * 1024 * 1024


class MemoryChildren(Bot):
    def pass_cards(self, view):
        read_end, write_end = os.pipe()
        children = []
        for _ in range(5):
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                try:
                    block = bytearray(CHUNK)
                    for i in range(0, CHUNK, 4096):  # touch every page: really resident
                        block[i] = 1
                    os.write(write_end, b"H")
                except MemoryError:
                    os._exit(3)
                os.close(write_end)  # (it has said all it will: the parent's read may end)
                time.sleep(3600)
            children.append(pid)
        os.close(write_end)
        held = 0
        while data := os.read(read_end, 16):  # until every child has written or died
            held += len(data)
        alive = sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children)
        print(f"HELD {min(held, alive)} (reported {held})", file=sys.stderr, flush=True)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
