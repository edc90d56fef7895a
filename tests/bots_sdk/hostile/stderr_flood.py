import sys

from bots_sdk import Bot, lowest


class StderrFlood(Bot):
    def pass_cards(self, view):
        for _ in range(2000):
            sys.stderr.write("y" * 65536)
        sys.stderr.flush()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
