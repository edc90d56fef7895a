"""ducker: passes its highest cards, ducks under the winning card, dumps the queen when void."""

from bots_sdk import Bot, View, highest, lowest, strength


class Ducker(Bot):
    def pass_cards(self, view: View) -> list[str]:
        return sorted(view.hand, key=strength)[-view.rules.pass_count :]

    def play(self, view: View) -> str:
        legal = view.legal
        if view.trick and all(card[1] == view.led_suit for card in legal):
            best = highest([card for _, card in view.trick if card[1] == view.led_suit])
            below = [card for card in legal if strength(card) < strength(best)]
            return highest(below) if below else lowest(legal)
        if view.trick:  # void: get rid of the danger
            if "QS" in legal:
                return "QS"
            hearts = [card for card in legal if card[1] == "H"]
            return highest(hearts or legal)
        return lowest(legal)
