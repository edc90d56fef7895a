"""Uploads are checked before anything is stored: every way a file can be wrong."""

from __future__ import annotations

import io
import re
import stat
import zipfile

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
