"""A bot in another language on the platform: its zip is taken, its validation builds it in
the runner's sandbox (the log says so), it enters the ladder and plays ladder matches; a bot
whose build fails is rejected with the compiler's words in its log."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from arena import services
from arena.models import BotVersion, Ladder, Match
from bots_sdk.builds import build
from bots_sdk.builds.build import pack
from engine.record import verify
from tests.sandboxes import sandbox_problem

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        bool(sandbox_problem("bubblewrap")),
        reason=f"bots in other languages build in the sandbox: {sandbox_problem('bubblewrap')}",
    ),
]

KITS = Path(__file__).resolve().parents[2] / "kits"


@pytest.fixture(autouse=True)
def build_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIDEL_BUILD_CACHE", str(tmp_path / "builds"))  # built for real, here
    monkeypatch.setenv("BIDEL_SANDBOX", "bubblewrap")


@pytest.fixture
def owner():  # type: ignore[no-untyped-def]
    return services.user_create(username="polyglot", password="a long passphrase")


@pytest.mark.parametrize("language", ["cpp", "rust", "java", "javascript"])
def test_a_kit_uploads_builds_validates_enters_the_ladder_and_plays(owner, language: str) -> None:  # type: ignore[no-untyped-def]
    missing = build.toolchain(language).missing
    if missing:
        pytest.skip(f"{', '.join(missing)} is not installed here")
    bot = services.bot_create(owner=owner, name=f"kit-{language}")
    version = services.version_upload(
        bot=bot, user=owner, filename=f"{language}.zip", data=pack(KITS / language)
    )
    validated = services.version_validate(version_id=version.pk)
    log = validated.validation_log
    assert validated.status == BotVersion.Status.ACTIVE, log
    assert f"built ({language}) in " in log and "entered the ladder(s): standard" in log
    ladder = Ladder.objects.get(name="standard")
    ladder.concurrency = 1
    ladder.save()
    rng = random.Random(5)
    for _ in range(12):  # until the newcomer (fewest matches) is seated: the first table
        (match,) = services.ladder_fill(ladder=ladder, rng=rng)
        if match.seats.filter(version=validated).exists():
            break
        services.match_run(match_id=match.pk)
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    seat = finished.seats.get(version=validated)
    assert seat.faults == [] and seat.score is not None, (seat.faults, seat.stderr)
    assert "from the cache" in seat.stderr  # the validation's build, not built again
    assert verify(finished.record)["valid"]


def test_a_bot_whose_build_fails_is_rejected_with_the_compilers_error(owner) -> None:  # type: ignore[no-untyped-def]
    if build.toolchain("cpp").missing:
        pytest.skip("g++ is not installed here")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("bidel.toml", 'language = "cpp"\n')
        out.writestr("main.cpp", "int main() { return missing_thing(); }\n")
    bot = services.bot_create(owner=owner, name="broken-cpp")
    version = services.version_upload(
        bot=bot, user=owner, filename="broken.zip", data=archive.getvalue()
    )
    rejected = services.version_validate(version_id=version.pk)
    assert rejected.status == BotVersion.Status.REJECTED
    log = rejected.validation_log
    assert "crash: the bot could not be built: the build failed (status 1)" in log
    assert "'missing_thing' was not declared in this scope" in log
    assert "rejected: fix the faults above and upload again" in log


def test_an_unusable_manifest_is_refused_at_upload(owner) -> None:  # type: ignore[no-untyped-def]
    from arena.uploads import UploadError

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("bidel.toml", 'language = "fortran"\n')
    bot = services.bot_create(owner=owner, name="old-school")
    with pytest.raises(UploadError, match="language 'fortran' is not one of python, cpp"):
        services.version_upload(bot=bot, user=owner, filename="b.zip", data=archive.getvalue())
    assert not bot.versions.exists()
