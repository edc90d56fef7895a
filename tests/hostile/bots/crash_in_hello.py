"""Dies while it is being loaded, before it says ready."""

import os

from bots_sdk import Bot, lowest


class CrashInHello(Bot):
    def __init__(self, seed=0):
        super().__init__(seed)
        os._exit(70)

    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
