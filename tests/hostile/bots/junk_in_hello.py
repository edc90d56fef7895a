"""Answers hello with unbalanced nesting junk 6,000 levels deep (54 kB: under the line cap)."""

import sys

from bots_sdk import Bot, lowest


class JunkInHello(Bot):
    def __init__(self, seed=0):
        super().__init__(seed)
        sys.__stdout__.buffer.write(b'[{"type":' * 6_000 + b"\n")
        sys.__stdout__.buffer.flush()

    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
