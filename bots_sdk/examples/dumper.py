"""dumper: plays its highest legal card unless it would take points — a weak, simple bot."""

from bots_sdk import Bot, View, highest, lowest


class Dumper(Bot):
    def pass_cards(self, view: View) -> list[str]:
        return self.rng.sample(view.hand, view.rules.pass_count)

    def play(self, view: View) -> str:
        points = any(card[1] == "H" or card == "QS" for _, card in view.trick)
        return lowest(view.legal) if points else highest(view.legal)
