"""The validation log a bot's owner reads counts hands from 1, as every text for people does
(the fault's ``hand`` field, stored with the match's seat, stays the record's index from 0)."""

from __future__ import annotations

import pytest

from arena import services
from arena.models import BotVersion

pytestmark = pytest.mark.django_db

#: Legal throughout, but for one answer that is no card: its first play of the second hand.
LATE_SLIP = (
    b"from bots_sdk import Bot, lowest\n\n\nclass LateSlip(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n"
    b"        if view.hand_number == 1 and len(view.hand) == 13:\n"
    b"            return 'XX'\n"
    b"        return lowest(view.legal)\n"
)


def test_a_fault_in_the_second_hand_is_logged_as_hand_2() -> None:
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="slip")
    version = services.version_upload(bot=bot, user=owner, filename="slip.py", data=LATE_SLIP)
    assert services.VALIDATION_HANDS >= 2
    version = services.version_validate(version_id=version.pk)
    log = version.validation_log
    assert version.status == BotVersion.Status.REJECTED, log
    faults = [line for line in log.splitlines() if line.startswith("illegal: ")]
    assert len(faults) == 1, log
    assert faults[0].startswith("illegal: 'XX' is not legal here (legal: ")
    assert faults[0].endswith(") (hand 2, play)"), log
