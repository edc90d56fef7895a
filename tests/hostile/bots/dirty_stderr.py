"""Writes NUL, an encoded lone surrogate (CESU-8) and a surrogate-escaped byte to stderr, then
raises an exception whose text holds them: none of it may reach the record as such."""

import os

from bots_sdk import Bot, lowest


class DirtyStderr(Bot):
    def pass_cards(self, view):
        escaped = "\udc80".encode("utf-8", "surrogateescape")  # the lone byte 0x80
        os.write(2, b"DIRTY nul:\x00 cesu:\xed\xa0\x80 escaped:" + escaped + b"\n")
        raise RuntimeError("nul:\x00 lone:\ud800 escaped:\udc80")

    def play(self, view):
        return lowest(view.legal)
