import json
import sys

from bots_sdk import Bot, lowest


class WrongSeat(Bot):
    def pass_cards(self, view):
        # An answer for a message that was never sent (another seat's move), then the real one.
        sys.__stdout__.write(json.dumps({"type": "action", "id": 999, "action": "2C"}) + "\n")
        sys.__stdout__.flush()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
