"""The Django project of Bidel: settings, URLs, WSGI/ASGI entry points and the Celery app.

Called ``hearts_platform`` rather than ``platform``: a top-level package named
``platform`` would shadow the standard library module of that name, which ``uuid`` (and
so Django) imports.
"""

from hearts_platform.celery import app as celery_app

__all__ = ("celery_app",)
