import os

from bots_sdk import Bot


class CloseStdout(Bot):
    def pass_cards(self, view):
        os.close(1)
        return view.hand[:3]

    def play(self, view):
        return view.legal[0]
