"""Answers with a list for an id: unhashable, where the referee looks ids up in a set."""

import json
import sys

from bots_sdk import Bot, lowest


class ListId(Bot):
    def pass_cards(self, view):
        line = json.dumps({"type": "action", "id": [1], "action": list(view.hand[:3])})
        sys.__stdout__.buffer.write(line.encode() + b"\n")
        sys.__stdout__.buffer.flush()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
