from __future__ import annotations

import pytest
from django.conf import settings
from kombu.utils.url import maybe_sanitize_url


def pytest_report_header(config: pytest.Config) -> list[str]:
    database = settings.DATABASES["default"]
    where = database.get("HOST") or database["NAME"]
    return [
        f"bidel: database {database['ENGINE'].rsplit('.', 1)[-1]} ({where}); "
        f"broker {maybe_sanitize_url(settings.CELERY_BROKER_URL)}"
    ]
