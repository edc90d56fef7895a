"""Answers every question with another message's number (written to the protocol itself)."""

import json
import os

from bots_sdk import Bot


class WrongId(Bot):
    def _answer(self, action):
        os.write(1, (json.dumps({"type": "action", "id": 99, "action": action}) + "\n").encode())
        return action

    def pass_cards(self, view):
        return self._answer(view.hand[:3])

    def play(self, view):
        return self._answer(view.legal[0])

    def declare_trump(self, view):
        return self._answer(view.legal[0])

    def choose_moon(self, view):
        return self._answer(view.legal[0])
