"""``python -m bots_sdk play|replay|new`` (see bots_sdk/cli.py)."""

import sys

from bots_sdk.cli import main

sys.exit(main())
