"""``python -m bots_sdk``: the ``bidel`` command (see bots_sdk/cli.py)."""

import sys

from bots_sdk.cli import main

if __name__ == "__main__":
    sys.exit(main())
