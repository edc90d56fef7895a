"""Messages to the workers: a task sent now, or once the current transaction commits. A
broker that fails is logged, never raised: what was written stays written, and the periodic
reaper sends the message again."""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def send(task_name: str, args: list[Any], **options: Any) -> bool:
    """Send a task now; a broker that fails is logged, never raised (what was written stays
    written: the periodic reaper sends the message again)."""
    try:
        # The project's Celery app, without importing the project (arena sits below it).
        current_app.send_task(task_name, args=args, **options)
    except Exception:
        logger.exception(
            "could not send %s%r: the broker failed; the reaper will resend it",
            task_name,
            tuple(args),
        )
        return False
    return True


def enqueue(task_name: str, *args: Any, **options: Any) -> None:
    """Send a task once the current transaction commits (never before, and never rolling it
    back: a broker error after the commit is logged by :func:`send`)."""
    transaction.on_commit(lambda: send(task_name, list(args), **options))
