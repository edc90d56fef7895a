"""A finished platform match's record replays with `bidel replay` as a local one does: each
hand's deal and passes, and the seats named as far as the record names them — the stored
record by what each seat ran (a built-in, an uploaded version's file name), the one
``GET /api/matches/{id}/record/`` serves as it names them, and a record naming none by
number."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Match
from tests.support import PROJECT_DIR

pytestmark = pytest.mark.django_db

BIDEL = Path(sys.executable).parent / "bidel"  # (installed with the project: make install)
GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _replayed(record: dict[str, Any], tmp_path: Path, name: str) -> list[str]:
    path = tmp_path / name
    path.write_text(json.dumps(record))
    shown = subprocess.run(
        [str(BIDEL), "replay", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_DIR,
        env={"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"},
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.splitlines()


@pytest.fixture
def finished() -> Match:
    """A finished challenge of two hands: an uploaded version (file ``ducker.py``) and three
    built-ins."""
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = services.version_upload(bot=bot, user=owner, filename="ducker.py", data=GOOD)
    version = services.version_validate(version_id=version.pk)
    assert version.status == BotVersion.Status.ACTIVE, version.validation_log
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[
            services.SeatSpec(version=version),
            *(services.SeatSpec(builtin=b) for b in ("low", "random", "heuristic")),
        ],
        hands=2,
    )
    played = services.match_run(match_id=match.pk)
    assert played is not None and played.status == Match.Status.FINISHED, played
    return played


def _shows_deals_and_passes(lines: list[str], record: dict[str, Any], labels: list[str]) -> None:
    assert lines[0] == "Seats: " + "  ".join(labels)
    width = max(map(len, labels))
    hand = record["hands"][0]
    assert lines[1] == "Hand 1" and lines[6] == "  passing left"
    dealt = [line for line in lines if line.startswith("  dealt ")]
    passed = [line for line in lines if line.startswith("  passed ")]
    assert len(dealt) == 8 and len(passed) == 8  # two hands, each seat's deal and pass
    for seat in range(4):
        assert dealt[seat].startswith(f"  dealt  {labels[seat]:{width}}  ")
        assert sorted(dealt[seat].split()[-13:]) == sorted(hand["deal"][seat])
        assert passed[seat].startswith(f"  passed {labels[seat]:{width}}  ")
        assert sorted(passed[seat].split(" -> ")[0].split()[-3:]) == sorted(hand["passes"][seat])
        assert passed[seat].endswith(f" -> {labels[(seat + 1) % 4]}")  # left: the next seat


def test_the_stored_record_replays_with_each_seat_named_by_what_it_ran(
    finished: Match, tmp_path: Path
) -> None:
    stored = finished.record
    assert [seat["bot"] for seat in stored["seats"]] == ["ducker.py", "low", "random", "heuristic"]
    lines = _replayed(stored, tmp_path, "stored.json")
    _shows_deals_and_passes(lines, stored, ["1:ducker.py", "2:low", "3:random", "4:heuristic"])


def test_the_downloaded_record_replays_named_as_served_and_by_number_when_unnamed(
    finished: Match, tmp_path: Path
) -> None:
    served = APIClient().get(f"/api/matches/{finished.pk}/record/").json()
    named = [seat.get("bot") for seat in served.get("seats") or [{}] * 4]
    labels = [f"{n + 1}:{name}" if name else f"seat {n + 1}" for n, name in enumerate(named)]
    _shows_deals_and_passes(_replayed(served, tmp_path, "served.json"), served, labels)
    unnamed = {key: value for key, value in served.items() if key != "seats"}
    lines = _replayed(unnamed, tmp_path, "unnamed.json")
    _shows_deals_and_passes(lines, unnamed, ["seat 1", "seat 2", "seat 3", "seat 4"])
