"""Three children it started compute without end while the bot itself only waits, at each
decision until they have used 0.45 s of CPU since it was asked (its own CPU stays near zero,
and on an idle or a loaded host alike that is more than the test's limit): its clock must
count them."""

import os
import time

from bots_sdk import Bot, lowest

CHILDREN: list[int] = []
TICK = os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    total = 0
    for pid in CHILDREN:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


class ChildrenCompute(Bot):
    def pass_cards(self, view):
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                while True:
                    pass
            CHILDREN.append(pid)
        return view.hand[:3]

    def play(self, view):
        start = children_cpu()
        while children_cpu() - start < 0.45:
            time.sleep(0.01)
        return lowest(view.legal)
