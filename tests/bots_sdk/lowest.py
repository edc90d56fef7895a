"""A bot file for the runner's tests: passes its three highest cards, plays its lowest."""

from bots_sdk import Bot, View, lowest


class Lowest(Bot):
    def pass_cards(self, view: View) -> list[str]:
        return view.hand[-3:]

    def play(self, view: View) -> str:
        return lowest(view.legal)
