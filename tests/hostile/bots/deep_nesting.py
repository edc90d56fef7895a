"""Answers its first move with an action nested 20,000 deep: a recursive parser overflows."""

import sys

from bots_sdk import Bot, lowest


def send(line: bytes) -> None:
    sys.__stdout__.buffer.write(line)
    sys.__stdout__.buffer.flush()


class DeepNesting(Bot):
    def pass_cards(self, view):
        send(b'{"type":"action","id":1,"action":' + b"[" * 20_000 + b"]" * 20_000 + b"}\n")
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
