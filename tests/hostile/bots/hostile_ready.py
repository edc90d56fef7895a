"""Says ready with an object for a name (and a list id), before the host's own ready."""

import sys

from bots_sdk import Bot, lowest


class HostileReady(Bot):
    def __init__(self, seed=0):
        super().__init__(seed)
        sys.__stdout__.buffer.write(b'{"type":"ready","name":{"\\u0000":[1e308]},"id":[[]]}\n')
        sys.__stdout__.buffer.flush()

    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
