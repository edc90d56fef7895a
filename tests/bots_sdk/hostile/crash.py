from bots_sdk import Bot


class Crash(Bot):
    def pass_cards(self, view):
        raise RuntimeError("boom")

    def play(self, view):
        return view.legal[0]
