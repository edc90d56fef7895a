"""Plays as if it sat elsewhere: cards another seat holds or played, never its own."""

from bots_sdk import Bot

DECK = [r + s for s in "CDHS" for r in "23456789TJQKA"]


class WrongSeat(Bot):
    def pass_cards(self, view):
        return [c for c in DECK if c not in view.hand][:3]

    def play(self, view):
        played = [card for _, card in view.trick]
        return played[0] if played else next(c for c in DECK if c not in view.hand)

    def declare_trump(self, view):
        return view.legal[0]

    def choose_moon(self, view):
        return view.legal[0]
