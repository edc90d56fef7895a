"""Celery tasks of the arena: thin shells that take ids and seeds (JSON) and call a service.

Every task has an explicit ``name`` so queued messages survive a refactoring.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import shared_task


@shared_task(name="arena.ping", bind=True)
def ping(self: Any, payload: Any = None) -> dict[str, Any]:
    """Echo ``payload`` with who ran it: proves a task made the round trip through a worker."""
    return {
        "payload": payload,
        "worker": self.request.hostname or socket.gethostname(),
        "pid": os.getpid(),
    }
