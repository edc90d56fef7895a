from bots_sdk import Bot


class Illegal(Bot):
    def pass_cards(self, view):
        return ["ZZ", "YY", "XX"]

    def play(self, view):
        return (
            next(card for card in view.hand if card not in view.legal)
            if len(view.legal) < len(view.hand)
            else "1S"
        )
