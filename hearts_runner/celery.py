"""The runner tier's Celery app: ``celery -A hearts_runner worker --queues=runner``.

It loads no Django and reads only the broker's address; at start it refuses to run when its
environment holds the platform's secrets, and it logs what its sandbox can do.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import worker_init

from bots_sdk.sandbox import cgroups
from hearts_runner.config import FORBIDDEN, celery_settings
from hearts_runner.tasks import sandbox_status

app = Celery("bidel-runner")
app.conf.update(celery_settings())
app.conf.include = ["hearts_runner.tasks"]

log = logging.getLogger("hearts_runner")


@worker_init.connect
def _refuse_secrets(sender: Any = None, **_: Any) -> None:
    if getattr(sender, "app", None) is not app:
        return  # a platform worker that also imports the runner's tasks
    held = [name for name in FORBIDDEN if os.environ.get(name)]
    if held:
        raise SystemExit(
            f"bidel runner: refusing to run bots with {', '.join(held)} in the environment; "
            "a runner needs only the broker's address (docs/operations.md)"
        )
    mounted = cgroups.mount_private_hierarchies()  # a container's own cgroups, made writable
    if mounted:
        log.warning("bidel runner: mounted cgroup controllers %s", ", ".join(mounted))
    log.warning("bidel runner: sandbox %s", sandbox_status())
