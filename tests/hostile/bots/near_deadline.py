"""Sleeps past its time, but not past the referee's wall guard, at every decision: CPU time
alone would never charge it."""

import time

from bots_sdk import Bot, lowest


class NearDeadline(Bot):
    def pass_cards(self, view):
        time.sleep(view.time_left + 0.35)
        return view.hand[:3]

    def play(self, view):
        time.sleep(view.time_left + 0.35)
        return lowest(view.legal)
