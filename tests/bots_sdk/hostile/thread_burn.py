import threading

from bots_sdk import Bot, lowest


def burn():
    while True:
        pass


class ThreadBurn(Bot):
    def pass_cards(self, view):
        threading.Thread(target=burn, daemon=True).start()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
