"""Answers with the id 10**5000: past Python's limit on converting digits to an int."""

import sys

from bots_sdk import Bot, lowest


class HugeIntId(Bot):
    def pass_cards(self, view):
        huge = b"1" + b"0" * 5000
        sys.__stdout__.buffer.write(b'{"type":"action","id":' + huge + b',"action":"2C"}\n')
        sys.__stdout__.buffer.flush()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
