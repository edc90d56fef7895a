"""``python -m hearts_runner``: start a runner worker (what the runner image runs).

Arguments are passed to ``celery worker``; the queue defaults to the runner queue.
"""

from __future__ import annotations

import sys

from hearts_runner.celery import app
from hearts_runner.config import RUNNER_QUEUE


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(a.startswith(("--queues", "-Q")) for a in args):
        args.append(f"--queues={RUNNER_QUEUE}")
    app.worker_main(["worker", "--loglevel=INFO", *args])


if __name__ == "__main__":
    main()
