import os

from bots_sdk import Bot


class StdoutFlood(Bot):
    def pass_cards(self, view):
        while True:
            os.write(1, b"x" * 65536)

    def play(self, view):
        return view.legal[0]
