"""Bots and their versions: created, changed, retired; a version uploaded, then settled by
its validation."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from arena.models import (
    Bot,
    BotVersion,
    Ladder,
)
from arena.services import policy
from arena.services.ladders import ladder_join
from arena.services.messages import enqueue
from arena.text import clean_text
from arena.uploads import UploadError, check_upload
from bots_sdk.builtin import BUILTIN

#: Whose doing a rejected validation is.
Blame = Literal["bot", "platform"]

VALIDATION_HANDS = 2


#: The built-ins a new version plays its validation match against.
VALIDATORS = ("low", "random", "heuristic")


DEFAULT_LADDER = "standard"


@transaction.atomic
def bot_create(
    *, owner: Any, name: str, description: str = "", join_ladders: list[Ladder] | None = None
) -> Bot:
    """A new bot. ``join_ladders``: the ladders it enters when its first version becomes
    active (None: the ``standard`` ladder; an empty list: none)."""
    if name.lower() in BUILTIN:
        raise ValidationError(
            {"name": gettext("%(name)s is the name of a built-in bot") % {"name": repr(name)}}
        )
    if Bot.objects.filter(name__iexact=name).exists():
        raise ValidationError({"name": gettext("a bot of that name exists")})
    bot = Bot(owner=owner, name=name, description=clean_text(description))
    bot.full_clean()
    bot.save()
    if join_ladders is None:
        join_ladders = list(Ladder.objects.filter(name=DEFAULT_LADDER, active=True))
    bot.join_ladders.set(join_ladders)
    return bot


@transaction.atomic
def bot_update(
    *, bot: Bot, user: Any, description: str | None = None, join_ladders: list[Ladder] | None = None
) -> Bot:
    """The owner changes a bot's description or the ladders it joins (its name stays: it is
    how others know it)."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner changes it")
    if description is not None:
        bot.description = clean_text(description)
        bot.save(update_fields=["description"])
    if join_ladders is not None:
        bot.join_ladders.set(join_ladders)
    return bot


@transaction.atomic
def bot_retire(*, bot: Bot, user: Any) -> Bot:
    """The owner retires a bot: its active version retires, so it plays no more (ladders
    pass it by, challenges refuse it, tournaments not yet started cancel); its matches,
    ratings and history stay. A new version brings it back."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner retires it")
    Bot.objects.select_for_update().get(pk=bot.pk)
    bot.versions.filter(status=BotVersion.Status.ACTIVE).update(status=BotVersion.Status.RETIRED)
    if bot.retired_at is None:
        bot.retired_at = timezone.now()
        bot.save(update_fields=["retired_at"])
    return bot


@transaction.atomic
def version_upload(*, bot: Bot, user: Any, filename: str, data: bytes) -> BotVersion:
    """Store a new version (checked first: nothing is stored for a refused upload) and queue
    its validation, within the owner's allowance of versions waiting for theirs
    (``UPLOAD_MAX_WAITING`` pending or validating at once, all their bots together)."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner uploads versions")
    policy.require_active(bot)
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one at a time
    limit = settings.UPLOAD_MAX_WAITING
    waiting = BotVersion.objects.filter(
        bot__owner=user, status__in=[BotVersion.Status.PENDING, BotVersion.Status.VALIDATING]
    ).count()
    if waiting >= limit:
        raise ValidationError(
            gettext(
                "%(waiting)s of your versions are waiting for their validation; the limit is "
                "%(limit)s: upload again when one is done"
            )
            % {"waiting": waiting, "limit": limit}
        )
    filename = clean_text(Path(filename).name)
    if len(filename) > BotVersion._meta.get_field("filename").max_length:  # type: ignore[operator]
        raise UploadError(gettext("the file name is longer than 128 characters; rename the file"))
    check_upload(filename, data)
    Bot.objects.select_for_update().get(pk=bot.pk)  # numbers are given out one at a time
    number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = BotVersion.objects.create(
        bot=bot,
        number=number,
        filename=filename,
        code=data,
        sha256=hashlib.sha256(data).hexdigest(),
    )
    enqueue("arena.version_dispatch", version.pk)
    return version


@transaction.atomic
def version_settle(
    *, version_id: int, claim: str, log: list[str], accepted: bool, blame: Blame = "bot"
) -> bool:
    """End a validation under its claim: active (the bot's previous active version retires)
    or rejected, with the log its owner reads: rejected for the bot's faults (``blame="bot"``:
    the log ends telling the owner to fix them), or because the platform could not validate it
    (``"platform"``: the log says so already). A stale or repeated result changes nothing; it
    always ends the version's ``validating``."""
    version = (
        BotVersion.objects.select_for_update()
        .filter(pk=version_id, status=BotVersion.Status.VALIDATING, claim_token=claim)
        .first()
    )
    if version is None:
        return False
    if accepted:
        first = not BotVersion.objects.filter(
            bot_id=version.bot_id, status__in=[BotVersion.Status.ACTIVE, BotVersion.Status.RETIRED]
        ).exists()
        before = BotVersion.objects.filter(
            bot_id=version.bot_id, status=BotVersion.Status.ACTIVE
        ).first()
        idle = policy.why_idle(version.bot)  # (disabled while it was validated)
        if before is not None and not idle:  # is the new one stronger? (comparisons)
            enqueue("arena.comparison_start", before.pk, version.pk)
            log_compare = f"compared with v{before.number} on duplicate deals: see the bot's page"
        else:
            log_compare = ""
        BotVersion.objects.filter(bot_id=version.bot_id, status=BotVersion.Status.ACTIVE).update(
            status=BotVersion.Status.RETIRED
        )
        version.status = BotVersion.Status.ACTIVE
        log = [*log, "active: it now plays for the bot", *([log_compare] if log_compare else [])]
        Bot.objects.filter(pk=version.bot_id).update(retired_at=None)  # back in use
        if idle:
            log.append(idle)
        elif first:  # the bot's first active version: it enters the ladders chosen for it
            joined = [
                ladder.name
                for ladder in version.bot.join_ladders.filter(active=True).order_by("name")
                if ladder_join(ladder=ladder, bot=version.bot)[1]
            ]
            if joined:
                log.append(f"entered the ladder(s): {', '.join(joined)}")
    else:
        version.status = BotVersion.Status.REJECTED
        if blame == "bot":
            log = [*log, "rejected: fix the faults above and upload again"]
    version.validation_log = clean_text("\n".join(str(line) for line in log))
    version.save(update_fields=["status", "validation_log"])
    return True
