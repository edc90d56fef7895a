"""Uploads are checked before anything is stored: every way a file can be wrong."""

from __future__ import annotations

import io
import re
import stat
import zipfile
from typing import Any

import pytest

from arena.uploads import (
    MAX_ENTRIES,
    MAX_SOURCE,
    MAX_UNCOMPRESSED,
    MAX_UPLOAD,
    UploadError,
    check_upload,
)

GOOD = (
    b"from bots_sdk import Bot\n\n\nclass B(Bot):\n"
    b"    def play(self, view):\n        return view.legal[0]\n"
)


def _zip(entries: dict[str, bytes], *, link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_good_uploads() -> None:
    assert check_upload("bot.py", GOOD) == "py"
    assert check_upload("Bot.ZIP", _zip({"bot.py": GOOD, "lib/helper.py": b"X = 1\n"})) == "zip"


@pytest.mark.parametrize(
    ("filename", "data", "message"),
    [
        ("bot.py", b"", "the file is empty"),
        ("bot.py", b"x" * (MAX_UPLOAD + 1), "the limit is"),
        ("bot.py", b"\xff\xfe", "is not UTF-8 text"),
        ("bot.py", b"def broken(:\n", "syntax error on line 1"),
        ("bot.txt", GOOD, "upload a .py file or a .zip"),
        ("bot.zip", b"PK not really", "is not a readable zip archive"),
        ("bot.zip", _zip({"other.py": GOOD}), "no bot.py at its root"),
        ("bot.zip", _zip({"bot.py": GOOD, "../escape.py": b"x=1\n"}), "points outside the archive"),
        ("bot.zip", _zip({"bot.py": GOOD, "/etc/cron.py": b"x=1\n"}), "points outside the archive"),
        ("bot.zip", _zip({"bot.py": GOOD}, link="evil"), "is a link"),
        ("bot.zip", _zip({f"f{i}.py": b"" for i in range(MAX_ENTRIES + 1)}), "entries; the limit"),
        (
            "bot.zip",
            _zip({"bot.py": GOOD, "bomb.txt": b"0" * (MAX_UNCOMPRESSED + 1)}),
            "unpacks to more",
        ),
        ("bot.zip", _zip({"bot.py": b"import (\n"}), "syntax error"),
    ],
)
def test_bad_uploads_are_refused_with_a_reason(filename: str, data: bytes, message: str) -> None:
    with pytest.raises(UploadError, match=message):
        check_upload(filename, data)


def test_a_zip_bomb_is_refused_without_being_inflated() -> None:
    bomb = _zip({"bot.py": GOOD, "bomb.txt": b"\0" * (200 * 1024 * 1024)})  # 200 MiB of zeros
    assert len(bomb) < MAX_UPLOAD
    with pytest.raises(UploadError, match="unpacks to more"):
        check_upload("bot.zip", bomb)


def _many_entries(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bot.py", GOOD)
        for i in range(count):
            archive.writestr(str(i), b"")
    return buffer.getvalue()


def _damaged(offset_of: bytes, delta: int, value: int | None = None, flag: int = 0) -> bytes:
    """A stored zip of bot.py with one byte of its central directory changed."""
    data = bytearray(_zip({"bot.py": GOOD}))
    if value is not None or flag:
        header = data.find(offset_of) + delta
        data[header] = value if value is not None else data[header] | flag
    return bytes(data)


def _bad_crc() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bot.py", GOOD)
    data = bytearray(buffer.getvalue())
    data[data.find(b"class B")] = ord("k")  # the stored bytes no longer match their CRC
    return bytes(data)


#: Hostile uploads: each answered with a named reason, never a RecursionError, a MemoryError
#: or a crash of the process that checks it.
HOSTILE = [
    ("bot.py", b"(" * 100_000, "too many nested parentheses"),
    ("bot.py", b"-" * 100_000 + b"1", "nested too deeply to compile"),
    ("bot.py", b"lambda:" * 100_000 + b"1", "nested too deeply to compile"),
    ("bot.py", b"x = 1" + b"+1" * 500_000, "nested too deeply to compile"),
    ("bot.py", b"x" + b".y" * 400_000, "nested too deeply to compile"),
    ("bot.py", b"x = 1\x00\n", "null bytes"),
    ("bot.zip", _zip({"bot.py": GOOD, "deep.py": b"1" + b"+1" * 500_000}), "deep.py is nested"),
    ("bot.zip", _zip({"bot.py": b"[" * 100_000}), "too many nested parentheses"),
    ("bot.zip", _zip({"bot.py": GOOD, "big.dat": b"\0" * 50_000_000}), "unpacks to more"),
    ("bot.zip", _zip({"bot.py": GOOD, "big.py": b"x = 1\n" * 400_000}), "bytes of Python; the"),
    ("bot.zip", _zip({"bot.py": GOOD, "a/" * 40 + "x.py": b""}), "too deep or too long"),
    ("bot.zip", _zip({"bot.py": GOOD, "n" * 300 + ".py": b""}), "too deep or too long"),
    ("bot.zip", _many_entries(100_000), "the limit is 1048576"),  # 8 MB: over the size cap
    ("bot.zip", _many_entries(11_000), "11001 entries; the limit is 100"),
    ("bot.zip", _bad_crc(), "cannot be read (BadZipFile)"),
    ("bot.zip", _damaged(b"PK\x01\x02", 8, flag=1), "cannot be read"),  # "encrypted"
    ("bot.zip", _damaged(b"PK\x01\x02", 10, value=99), "cannot be read"),  # unknown method
    ("bot.zip", b"PK\x05\x06" + b"\xff" * 18, "not a readable zip archive"),
]


@pytest.mark.parametrize(("filename", "data", "message"), HOSTILE)
def test_hostile_uploads_are_refused_with_a_named_reason(
    filename: str, data: bytes, message: str
) -> None:
    with pytest.raises(UploadError, match=re.escape(message)):
        check_upload(filename, data)


def test_a_huge_good_source_passes_the_checker() -> None:
    source = b"".join(b"def f%d(x):\n    return x + %d\n" % (i, i) for i in range(20_000))
    assert 500_000 < len(source) <= MAX_SOURCE
    assert check_upload("bot.py", source) == "py"


@pytest.mark.django_db
def test_the_api_answers_hostile_uploads_with_a_400() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from arena import services
    from arena.models import BotVersion

    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    client = APIClient()
    client.force_authenticate(owner)
    for filename, data, message in HOSTILE[:2] + HOSTILE[6:9] + HOSTILE[12:15]:
        response = client.post(
            f"/api/bots/{bot.pk}/versions/",
            {"file": SimpleUploadedFile(filename, data)},
            format="multipart",
        )
        assert response.status_code == 400, (filename, message)
        said = " ".join(response.json()["detail"])  # (every error: a list of messages)
        assert message in said or "the limit is" in said
    long_name = client.post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile("b" * 200 + ".py", GOOD)},
        format="multipart",
    )
    assert long_name.status_code == 400 and "longer than 128" in long_name.json()["detail"][0]
    assert not BotVersion.objects.exists()


@pytest.mark.django_db
def test_an_oversized_upload_is_stopped_as_it_streams_in_at_both_doors() -> None:
    import tempfile
    from pathlib import Path

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from rest_framework.test import APIClient

    from arena import services
    from arena.models import BotVersion
    from arena.uploads import MAX_UPLOAD

    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    huge = b"# " + b"x" * (8 * MAX_UPLOAD) + b"\n"
    spool = tempfile.gettempdir()
    before = {p.name for p in Path(spool).iterdir()}
    api = APIClient()
    api.force_authenticate(owner)
    body = {"file": SimpleUploadedFile("bot.py", huge)}
    refused = api.post(f"/api/bots/{bot.pk}/versions/", body, format="multipart")
    assert refused.status_code == 400, refused.content[:300]
    assert "the limit is 1048576 bytes" in " ".join(refused.json()["detail"])
    web = Client()
    web.force_login(owner)
    page = web.post(f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", huge)})
    assert page.status_code == 400 and "larger than the limit" in page.content.decode()
    assert not BotVersion.objects.exists()
    after = {p.name for p in Path(spool).iterdir()}
    assert not {n for n in after - before if n.endswith(".upload")}  # nothing spooled to disk


# --- a flood of uploads: throttled per user and per bot, a cap on versions waiting -------------


def _version(i: int) -> Any:
    """A distinct version of a good bot (a file object, as a client sends one)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("bot.py", GOOD + f"# version {i}\n".encode())


def _owner_with_bots(username: str, count: int) -> tuple[Any, list[Any], Any]:
    from rest_framework.test import APIClient

    from arena import services

    owner = services.user_create(username=username, password="a long passphrase")
    bots = [services.bot_create(owner=owner, name=f"{username}-{i}") for i in range(count)]
    client = APIClient()
    client.force_authenticate(owner)
    return owner, bots, client


def _upload(client: Any, bot: Any, i: int) -> Any:
    return client.post(f"/api/bots/{bot.pk}/versions/", {"file": _version(i)}, format="multipart")


@pytest.fixture
def rates(monkeypatch: pytest.MonkeyPatch, settings: Any) -> dict[str, str]:
    """Small upload rates, and no cap on waiting versions (its own test below)."""
    from rest_framework.throttling import SimpleRateThrottle

    chosen = {"uploads": "5/hour", "bot_uploads": "3/hour"}
    for scope, rate in chosen.items():
        monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, rate)
    settings.UPLOAD_MAX_WAITING = 100
    return chosen


@pytest.mark.django_db
def test_uploads_are_throttled_per_bot_and_per_user_at_both_doors(rates: dict[str, str]) -> None:
    from django.test import Client
    from rest_framework.test import APIClient

    from arena import services
    from arena.models import BotVersion

    owner, (first, second), client = _owner_with_bots("ada", 2)
    # Someone else's attempts at the owner's bot are refused and spend none of its allowance.
    stranger = APIClient()
    stranger.force_authenticate(services.user_create(username="eve", password="x long enough"))
    for i in range(6):
        assert _upload(stranger, first, i).status_code == 403

    assert [_upload(client, first, i).status_code for i in range(3)] == [201] * 3
    refused = _upload(client, first, 3)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert refused.json()["detail"][0].startswith(
        "too many new versions of one bot: the limit is 3/hour."
    ), refused.json()
    # Another bot of the same owner: the user's allowance (5) is what is left.
    assert [_upload(client, second, i).status_code for i in range(2)] == [201] * 2
    refused = _upload(client, second, 2)
    assert refused.status_code == 429
    said = refused.json()["detail"][0]
    assert said.startswith("too many new versions from one user: the limit is 5/hour."), said
    # The upload page counts in the same allowance.
    page = Client()
    page.force_login(owner)
    answer = page.post(f"/bots/{second.pk}/upload/", {"file": _version(9)})
    assert answer.status_code == 429
    assert "too many new versions from one user: the limit is 5/hour" in answer.content.decode()
    assert BotVersion.objects.filter(bot__owner=owner).count() == 5  # nothing for a refusal


#: Passes cards it does not hold: its validation rejects it.
REJECTED_BOT = (
    b"from bots_sdk import Bot\n\n\nclass Wrong(Bot):\n"
    b"    def pass_cards(self, view):\n        return ['XX', 'YY', 'ZZ']\n\n"
    b"    def play(self, view):\n        return view.legal[0]\n"
)


@pytest.mark.django_db
def test_rejected_and_refused_uploads_spend_their_own_bound_not_the_new_versions(
    rates: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version its validation rejects, and an upload refused for what it holds, are failed
    tries: they leave the new versions' allowance whole and have a bound of their own; what
    is left is in the upload's answer and on the upload page."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from rest_framework.throttling import SimpleRateThrottle

    from arena import services
    from arena.models import BotVersion

    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "refused_uploads", "4/hour")
    owner, (bot,), client = _owner_with_bots("ada", 1)

    def wrong(i: int) -> Any:
        code = REJECTED_BOT + f"# try {i}\n".encode()
        answer = client.post(
            f"/api/bots/{bot.pk}/versions/",
            {"file": SimpleUploadedFile("bot.py", code)},
            format="multipart",
        )
        assert answer.status_code == 201, answer.content
        made = BotVersion.objects.get(bot=bot, number=answer.json()["number"])
        services.version_validate(version_id=made.pk)
        return answer.json()

    for i in range(2):
        wrong(i)
    assert BotVersion.objects.filter(bot=bot, status="rejected").count() == 2
    broken = client.post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile("bot.py", b"def broken(:\n")},
        format="multipart",
    )
    assert broken.status_code == 400  # refused for what it holds: a failed try too
    # the bot's allowance of new versions (3 an hour) is whole: three good ones go in
    answers = [_upload(client, bot, i) for i in range(3)]
    assert [a.status_code for a in answers] == [201] * 3
    assert [a.json()["uploads_left"]["bot"] for a in answers] == [
        {"left": 2, "rate": "3/hour"},
        {"left": 1, "rate": "3/hour"},
        {"left": 0, "rate": "3/hour"},
    ]
    assert answers[-1].json()["uploads_left"]["failed"] == {"left": 1, "rate": "4/hour"}
    refused = _upload(client, bot, 3)
    assert refused.status_code == 429
    assert refused.json()["detail"][0].startswith(
        "too many new versions of one bot: the limit is 3/hour. Expected available in "
    )
    # the failed tries' own bound: one more, then refused before its body is read
    second = services.bot_create(owner=owner, name="ada-second")
    for i in range(2):
        tried = client.post(
            f"/api/bots/{second.pk}/versions/",
            {"file": SimpleUploadedFile("bot.py", b"def broken(:\n")},
            format="multipart",
        )
        assert tried.status_code == (400 if i == 0 else 429), tried.content
    assert tried.json()["detail"][0].startswith(
        "too many rejected or refused uploads from one user: the limit is 4/hour."
    )
    page = Client()
    page.force_login(owner)
    shown = page.get(f"/bots/{second.pk}/upload/").content.decode()
    assert "Left this hour: 3 new versions of this bot, 2 of all your bots; 0 failed tries" in shown


@pytest.mark.django_db
def test_versions_waiting_for_validation_are_capped_per_user(settings: Any) -> None:
    from arena.models import BotVersion

    settings.UPLOAD_MAX_WAITING = 2
    owner, bots, client = _owner_with_bots("ada", 2)
    _, (others,), other_client = _owner_with_bots("grace", 1)
    assert _upload(client, bots[0], 0).status_code == 201
    assert _upload(client, bots[1], 1).status_code == 201  # all the user's bots together
    refused = _upload(client, bots[0], 2)
    assert refused.status_code == 400, refused.content
    assert refused.json()["detail"] == [
        "2 of your versions are waiting for their validation; the limit is 2: upload again "
        "when one is done"
    ]
    assert _upload(other_client, others, 0).status_code == 201  # another user's own cap
    # One validation done (its outcome whatever): room for one more.
    done = BotVersion.objects.filter(bot__owner=owner).order_by("pk").first()
    done.status = BotVersion.Status.REJECTED
    done.save(update_fields=["status"])
    assert _upload(client, bots[0], 3).status_code == 201
    assert _upload(client, bots[0], 4).status_code == 400
    assert BotVersion.objects.filter(bot__owner=owner).count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_flood_of_uploads_is_refused_at_its_limits_while_a_match_still_finishes(
    settings: Any,
) -> None:
    """Forty distinct versions to four bots as fast as a client sends them, before any worker
    is up: exactly the waiting cap of them is made, then each is refused naming the cap (400)
    until the user's failed tries are spent (every refused attempt is one), then naming that
    bound (429), before its body is read. A real worker then validates the few made while a
    challenge another user queues meanwhile is played within the suite's deadline (a minute by
    default); the rate still holds."""
    from rest_framework.throttling import SimpleRateThrottle

    from arena import services
    from arena.models import BotVersion, Match
    from tests.arena.live import worker_env
    from tests.support import DEADLINE, celery_worker, purge_queues, wait_until

    user_rate = int(SimpleRateThrottle.THROTTLE_RATES["uploads"].split("/")[0])
    bot_rate = int(SimpleRateThrottle.THROTTLE_RATES["bot_uploads"].split("/")[0])
    failed_rate = int(SimpleRateThrottle.THROTTLE_RATES["refused_uploads"].split("/")[0])
    waiting_cap = settings.UPLOAD_MAX_WAITING
    assert waiting_cap < user_rate and waiting_cap + failed_rate < 40  # (the defaults)
    assert -(-waiting_cap // 4) < bot_rate
    owner, bots, client = _owner_with_bots("ada", 4)
    grace = services.user_create(username="grace", password="a long passphrase")
    versions = BotVersion.objects.filter(bot__owner=owner)
    purge_queues("celery", "runner")

    def upload(i: int) -> tuple[int, str]:
        response = _upload(client, bots[i % 4], i)
        said = " ".join(response.json().get("detail", [])) if response.status_code >= 400 else ""
        return response.status_code, said

    answers = [upload(i) for i in range(40)]
    statuses = [status for status, _ in answers]
    expected = [201] * waiting_cap + [400] * failed_rate
    assert statuses == expected + [429] * (40 - waiting_cap - failed_rate), answers
    for status, said in answers:
        if status == 400:
            assert f"waiting for their validation; the limit is {waiting_cap}" in said, said
        if status == 429:
            assert said.startswith("too many rejected or refused uploads from one user"), said
    assert versions.count() == waiting_cap
    with celery_worker(env=worker_env(), hostname="flood@test", queues=["celery", "runner"]):
        challenge = services.challenge_create(
            user=grace, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
        )
        wait_until(  # (within the suite's one deadline: not after the flood's validations)
            lambda: Match.objects.get(pk=challenge.pk).status in ("finished", "failed"),
            "the challenge queued behind the flood",
        )
        assert Match.objects.get(pk=challenge.pk).status == "finished"
        wait_until(
            lambda: not versions.filter(status__in=["pending", "validating"]).exists(),
            "the flood's versions validated",
            deadline=5 * DEADLINE,
        )
    assert upload(40)[0] == 429 and versions.count() == waiting_cap
