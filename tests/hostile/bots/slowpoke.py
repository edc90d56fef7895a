"""Takes 0.1 s of its clock at every decision, always within it: a match of such bots is as
long as its hands, which a target no hand can reach makes endless."""

import time

from bots_sdk import Bot, lowest


class Slowpoke(Bot):
    def pass_cards(self, view):
        time.sleep(0.1)
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.1)
        return lowest(view.legal)
