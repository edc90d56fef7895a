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

#: What a validated upload leads to (:class:`BotVersion.Activation`).
ACTIVATE_NOW = BotVersion.Activation.NOW.value
ACTIVATE_IF_NOT_WEAKER = BotVersion.Activation.IF_NOT_WEAKER.value
ACTIVATE_NEVER = BotVersion.Activation.NEVER.value

#: A version that passed its validation: one its owner may make active.
VALIDATED = (
    BotVersion.Status.ACTIVE,
    BotVersion.Status.RETIRED,
    BotVersion.Status.CANDIDATE,
    BotVersion.Status.BENCHED,
)


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
def version_upload(
    *, bot: Bot, user: Any, filename: str, data: bytes, activation: str = ACTIVATE_NOW
) -> BotVersion:
    """Store a new version (checked first: nothing is stored for a refused upload) and queue
    its validation, within the owner's allowance of versions waiting for theirs
    (``UPLOAD_MAX_WAITING`` pending or validating at once, all their bots together).
    ``activation``: what its validation leads to (:class:`BotVersion.Activation`)."""
    if activation not in BotVersion.Activation.values:
        raise ValidationError(
            {
                "activate": gettext("activate is one of: %(choices)s")
                % {"choices": ", ".join(BotVersion.Activation.values)}
            }
        )
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
        activation=activation,
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
        before = BotVersion.objects.filter(
            bot_id=version.bot_id, status=BotVersion.Status.ACTIVE
        ).first()
        idle = policy.why_idle(version.bot)  # (disabled while it was validated)
        how = version.activation
        if how == ACTIVATE_NEVER:
            version.status = BotVersion.Status.RETIRED
            log = [*log, f"validated; not made active, as asked: {_activate_hint(version)}"]
        elif how == ACTIVATE_IF_NOT_WEAKER and before is not None:
            if idle:
                version.status = BotVersion.Status.RETIRED
                log = [*log, f"validated; no trial: {idle}"]
            else:
                version.status = BotVersion.Status.CANDIDATE
                enqueue("arena.comparison_start", before.pk, version.pk, True)
                log = [
                    *log,
                    f"validated; on trial: it plays a comparison with v{before.number} on "
                    "duplicate deals and replaces it only if it is not found weaker and "
                    "faults in none of its hands (see the bot's page)",
                ]
        else:
            if before is not None and not idle:  # is the new one stronger? (comparisons)
                enqueue("arena.comparison_start", before.pk, version.pk)
            log = [*log, *_make_active(version)]
            if before is not None and not idle:
                log.append(f"compared with v{before.number} on duplicate deals: see the bot's page")
            if idle:
                log.append(idle)
    else:
        version.status = BotVersion.Status.REJECTED
        if blame == "bot":
            log = [*log, "rejected: fix the faults above and upload again"]
    version.validation_log = clean_text("\n".join(str(line) for line in log))
    version.save(update_fields=["status", "validation_log", "activated_at"])
    return True


def _activate_hint(version: BotVersion) -> str:
    return (
        f"`bidel activate {version.bot.name} {version.number}`, the bot's page or "
        f"POST /api/bots/{version.bot_id}/activate/ makes it play"
    )


def _make_active(version: BotVersion) -> list[str]:
    """``version`` becomes its bot's active version (the one playing retires; the bot is back
    in use); on the bot's first activation it enters the ladders chosen for it. The caller
    saves ``version`` (``status``, ``activated_at``) and holds the transaction. Lines for
    its log."""
    first = (
        not BotVersion.objects.filter(bot_id=version.bot_id, activated_at__isnull=False).exists()
        and not BotVersion.objects.filter(
            bot_id=version.bot_id, status=BotVersion.Status.ACTIVE
        ).exists()
    )
    BotVersion.objects.filter(bot_id=version.bot_id, status=BotVersion.Status.ACTIVE).exclude(
        pk=version.pk
    ).update(status=BotVersion.Status.RETIRED)
    version.status = BotVersion.Status.ACTIVE
    version.activated_at = timezone.now()
    Bot.objects.filter(pk=version.bot_id).update(retired_at=None)  # back in use
    lines = ["active: it now plays for the bot"]
    if first and not policy.why_idle(version.bot):  # it enters the ladders chosen for it
        joined = [
            ladder.name
            for ladder in version.bot.join_ladders.filter(active=True).order_by("name")
            if ladder_join(ladder=ladder, bot=version.bot)[1]
        ]
        if joined:
            lines.append(f"entered the ladder(s): {', '.join(joined)}")
    return lines


def _append_log(version: BotVersion, line: str) -> None:
    version.validation_log = clean_text(f"{version.validation_log}\n{line}".strip())


@transaction.atomic
def version_activate(*, bot: Bot, user: Any, number: int) -> BotVersion:
    """The owner makes one of the bot's validated versions the one that plays (a retired,
    benched or candidate version; the active one stays so). A candidate's trial ends
    without a verdict. The bot's notice is cleared: the owner has chosen."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner chooses the version that plays")
    policy.require_active(bot)
    Bot.objects.select_for_update().get(pk=bot.pk)  # one change of version at a time
    version = bot.versions.select_for_update().filter(number=number).first()
    if version is None:
        raise ValidationError({"version": gettext("this bot has no version %(n)s") % {"n": number}})
    if version.status == BotVersion.Status.ACTIVE:
        return version
    if version.status not in VALIDATED:
        raise ValidationError(
            {
                "version": gettext(
                    "v%(n)s is %(status)s: only a version that passed its validation can play"
                )
                % {"n": number, "status": version.get_status_display()}
            }
        )
    if version.status == BotVersion.Status.CANDIDATE:
        _trials_end(version, f"no verdict: its owner made v{number} active")
    lines = _make_active(version)
    _append_log(version, f"{lines[0]} (made active by its owner)")
    for line in lines[1:]:
        _append_log(version, line)
    version.save(update_fields=["status", "activated_at", "validation_log"])
    Bot.objects.filter(pk=bot.pk).update(notice="")
    return version


def _trials_end(version: BotVersion, verdict: str) -> None:
    """End the running trial of candidate ``version`` without a verdict (its matches not yet
    begun go)."""
    from arena.models import Comparison, Match

    for trial in Comparison.objects.select_for_update().filter(
        newer=version, trial=True, status=Comparison.Status.RUNNING
    ):
        trial.matches.filter(status=Match.Status.QUEUED).delete()
        trial.status = Comparison.Status.SUPERSEDED
        trial.verdict = verdict
        trial.finished_at = timezone.now()
        trial.save(update_fields=["status", "verdict", "finished_at"])


@transaction.atomic
def version_trial_end(*, version_id: int, promote: bool, why: str) -> bool:
    """A candidate's trial is over: it becomes active (``promote``) or retires, its log and
    the bot's notice saying ``why``. A version no longer a candidate changes nothing."""
    version = (
        BotVersion.objects.select_for_update()
        .filter(pk=version_id, status=BotVersion.Status.CANDIDATE)
        .first()
    )
    if version is None:
        return False
    Bot.objects.select_for_update().get(pk=version.bot_id)
    if promote and not policy.why_idle(version.bot):
        for line in _make_active(version):
            _append_log(version, line)
        _append_log(version, f"after its trial: {why}")
        notice = ""
    else:
        version.status = BotVersion.Status.RETIRED
        notice = f"v{version.number} was not made active: {why}"
        _append_log(version, f"{notice}; {_activate_hint(version)} all the same")
    version.save(update_fields=["status", "activated_at", "validation_log"])
    Bot.objects.filter(pk=version.bot_id).update(notice=notice)
    return True


def version_candidates_retire(*, bot_id: int, why: str) -> int:
    """Candidates of the bot whose trial was superseded retire, saying ``why``; how many."""
    retired = 0
    for version in BotVersion.objects.select_for_update().filter(
        bot_id=bot_id, status=BotVersion.Status.CANDIDATE
    ):
        version.status = BotVersion.Status.RETIRED
        _append_log(version, f"not made active: {why}; {_activate_hint(version)} all the same")
        version.save(update_fields=["status", "validation_log"])
        retired += 1
    return retired


@transaction.atomic
def version_bench_check(*, version_id: int) -> bool:
    """An active version whose seats faulted in too many of its recent ladder matches (at
    least ``BENCH_MIN_FAULTED`` of its last ``BENCH_WINDOW``, and more than
    ``BENCH_FAULT_SHARE`` of them) is benched: the version that played before it (the last
    one made active, not benched) plays again, and the owner is told (the bot's notice, its
    page, ``bidel status``). Whether it was benched."""
    from arena.models import Match, MatchSeat

    version = (
        BotVersion.objects.select_for_update()
        .filter(pk=version_id, status=BotVersion.Status.ACTIVE)
        .first()
    )
    if version is None:
        return False
    recent = list(
        MatchSeat.objects.filter(
            version=version, match__kind=Match.Kind.LADDER, match__status=Match.Status.FINISHED
        )
        .order_by("-match__finished_at", "-match_id")
        .values_list("faults", flat=True)[: settings.BENCH_WINDOW]
    )
    faulted = sum(1 for faults in recent if faults)
    if faulted < settings.BENCH_MIN_FAULTED or faulted <= settings.BENCH_FAULT_SHARE * len(recent):
        return False
    Bot.objects.select_for_update().get(pk=version.bot_id)
    version.status = BotVersion.Status.BENCHED
    why = (
        f"v{version.number} was benched: its seats faulted in {faulted} of its last "
        f"{len(recent)} ladder matches"
    )
    previous = (
        BotVersion.objects.select_for_update()
        .filter(
            bot_id=version.bot_id,
            status=BotVersion.Status.RETIRED,
            activated_at__isnull=False,
        )
        .order_by("-activated_at", "-number")
        .first()
    )
    if previous is not None:
        for line in _make_active(previous):
            _append_log(previous, line)
        _append_log(previous, f"restored: {why}")
        previous.save(update_fields=["status", "activated_at", "validation_log"])
        notice = f"{why}; v{previous.number} plays again"
    else:
        notice = f"{why}; no earlier version to restore: the bot plays no more until one is"
    _append_log(version, f"{notice} ({_activate_hint(version)} again)")
    version.save(update_fields=["status", "validation_log"])
    Bot.objects.filter(pk=version.bot_id).update(notice=notice)
    return True
