import sys

from bots_sdk import Bot, lowest


class HugeFile(Bot):
    def pass_cards(self, view):
        block = b"x" * (1024 * 1024)
        written = 0
        try:
            with open("/tmp/huge", "wb") as handle:
                for _ in range(4096):
                    handle.write(block)
                    handle.flush()
                    written += 1
        except OSError as exc:
            print(f"WRITE_STOPPED after {written} MiB: {exc}", file=sys.stderr)
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
