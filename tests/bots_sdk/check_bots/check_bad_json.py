"""Answers with a line that is not JSON (written to the protocol itself)."""

import os

from bots_sdk import Bot


class BadJson(Bot):
    def _answer(self, action):
        os.write(1, b"{'type': 'action', 'id': 1}\n")
        return action

    def pass_cards(self, view):
        return self._answer(view.hand[:3])

    def play(self, view):
        return self._answer(view.legal[0])

    def declare_trump(self, view):
        return self._answer(view.legal[0])

    def choose_moon(self, view):
        return self._answer(view.legal[0])
