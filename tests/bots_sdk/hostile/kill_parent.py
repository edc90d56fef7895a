import os
import signal
import sys

from bots_sdk import Bot, lowest


class KillParent(Bot):
    def pass_cards(self, view):
        for pid in {os.getppid(), 1}:
            try:
                os.kill(pid, signal.SIGKILL)
                print(f"KILLED {pid}", file=sys.stderr)
            except OSError as exc:
                print(f"KILL {pid} REFUSED: {exc}", file=sys.stderr)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
