"""Answers every question twice: once itself on the protocol, once through the SDK."""

import json
import os

from bots_sdk import Bot


class Twice(Bot):
    def _answer(self, action):
        os.write(1, (json.dumps({"type": "action", "id": 1, "action": action}) + "\n").encode())
        return action

    def pass_cards(self, view):
        return self._answer(view.hand[:3])

    def play(self, view):
        return self._answer(view.legal[0])

    def declare_trump(self, view):
        return self._answer(view.legal[0])

    def choose_moon(self, view):
        return self._answer(view.legal[0])
