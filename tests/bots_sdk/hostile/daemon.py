import os
import time

from bots_sdk import Bot, lowest


class Daemon(Bot):
    def pass_cards(self, view):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                for fd in (0, 1, 2):
                    os.close(fd)
                time.sleep(3600)
            os._exit(0)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
