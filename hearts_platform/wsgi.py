"""WSGI entry point: ``gunicorn hearts_platform.wsgi``."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hearts_platform.settings")

application = get_wsgi_application()

# Every module is loaded now (Django, DRF, the engine, the app): over 100,000 objects that live
# as long as the process. Left to the collector, each full pass walks them all (35-50 ms, a
# page's whole budget, at random moments); frozen, passes walk only what requests make.
import hearts_platform.urls  # noqa: E402,F401  (the URLconf and views load lazily otherwise)

gc.collect()
gc.freeze()
