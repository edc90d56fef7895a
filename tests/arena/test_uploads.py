"""Uploads are checked before anything is stored: every way a file can be wrong."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from arena.uploads import MAX_ENTRIES, MAX_UNCOMPRESSED, MAX_UPLOAD, UploadError, check_upload

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
