"""``python -m bots_sdk play|replay|new`` (see bots_sdk/cli.py)."""

import os
import sys

from bots_sdk.cli import main

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # (its reader stopped early, as `| head` does): quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
