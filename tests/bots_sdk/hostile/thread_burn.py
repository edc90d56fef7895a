import threading
import time

from bots_sdk import Bot, lowest


def burn():
    while True:
        pass


class ThreadBurn(Bot):
    def pass_cards(self, view):
        threading.Thread(target=burn, daemon=True).start()
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.05)  # the main thread idles: the burner has the CPU
        return lowest(view.legal)
