"""``python -m hearts_runner``: start a runner worker (what the runner image runs).

Arguments are passed to ``celery worker``; the queue defaults to the runner queue.
``--people`` makes a runner of people's games instead: the people's queue, and (unless
``--concurrency`` says otherwise) :data:`~hearts_runner.config.PEOPLE_CONCURRENCY` games at
once, each mostly waiting on its person.
"""

from __future__ import annotations

import sys

from hearts_runner.celery import app
from hearts_runner.config import PEOPLE_CONCURRENCY, PEOPLE_QUEUE, RUNNER_QUEUE


def worker_args(argv: list[str]) -> list[str]:
    """The ``celery worker`` arguments for this command line.

    >>> worker_args(["--concurrency=2"])
    ['--concurrency=2', '--queues=runner']
    >>> worker_args(["--people", "--hostname=p@%h"])
    ['--hostname=p@%h', '--queues=runner.people', '--concurrency=4']
    """
    people = "--people" in argv
    args = [a for a in argv if a != "--people"]
    if not any(a.startswith(("--queues", "-Q")) for a in args):
        args.append(f"--queues={PEOPLE_QUEUE if people else RUNNER_QUEUE}")
    if people and not any(a.startswith(("--concurrency", "-c")) for a in args):
        args.append(f"--concurrency={PEOPLE_CONCURRENCY}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = worker_args(list(sys.argv[1:] if argv is None else argv))
    app.worker_main(["worker", "--loglevel=INFO", *args])


if __name__ == "__main__":
    main()
