"""Waits 0.15 s at each decision (no CPU of its own, under the wall tolerance) while three
children it started compute without end: its clock must count them."""

import os
import time

from bots_sdk import Bot, lowest


class ChildrenCompute(Bot):
    def pass_cards(self, view):
        for _ in range(3):
            if os.fork() == 0:
                while True:
                    pass
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.15)
        return lowest(view.legal)
