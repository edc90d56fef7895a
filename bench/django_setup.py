"""Start Django for a benchmark script: a fresh SQLite database and embedded broker in a new
temporary folder, or (``use_env``) the DATABASE_URL / REDIS_URL already configured; migrated."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django(*, use_env: bool, prefix: str) -> Path:
    """Configure, start and migrate Django; returns the scratch folder."""
    sys.path.insert(0, str(ROOT))
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    if not use_env:
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
        os.environ["BIDEL_VAR_DIR"] = str(folder)
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
    os.environ["DJANGO_SETTINGS_MODULE"] = "hearts_platform.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return folder


def upload_example_bots(prefix: str) -> list:
    """Four uploaded, validated bot versions of a new user (the SDK's examples ``ducker`` and
    ``dumper`` twice each): the seats of the benchmarks' ladder matches."""
    import uuid

    from arena import services

    user = services.user_create(
        username=f"{prefix}-{uuid.uuid4().hex[:6]}", password=f"{prefix} passphrase"
    )
    examples = ROOT / "bots_sdk" / "examples"
    versions = []
    for i, example in enumerate(["ducker", "dumper", "ducker", "dumper"]):
        bot = services.bot_create(owner=user, name=f"{example}-{i}-{uuid.uuid4().hex[:4]}")
        code = (examples / f"{example}.py").read_bytes()
        version = services.version_upload(bot=bot, user=user, filename=f"{example}.py", data=code)
        versions.append(services.version_validate(version_id=version.pk))  # (here, at once)
    return versions
