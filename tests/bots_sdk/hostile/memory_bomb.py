from bots_sdk import Bot


class MemoryBomb(Bot):
    def pass_cards(self, view):
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))

    def play(self, view):
        return view.legal[0]
