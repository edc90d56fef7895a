"""The one Celery app of Bidel, configured from Django settings (the ``CELERY_`` names).

Workers: ``celery -A hearts_platform worker``; the scheduler: ``celery -A hearts_platform beat``
(django-celery-beat's database scheduler). Tasks live in the apps' ``tasks`` modules and each
has an explicit name (``arena.ping``), so a moved function never orphans queued work.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hearts_platform.settings")

app = Celery("bidel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
