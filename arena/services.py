"""The arena's workflows. Every write goes through here: keyword-only, typed, atomic, and
guarded by a status check so that running one twice is harmless (a redelivered task finds
the work done and stops)."""

from __future__ import annotations

import hashlib
import logging
import random
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Max, Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.http import urlsafe_base64_decode
from django.utils.translation import gettext

import engine
from arena import tokens
from arena.models import (
    ApiToken,
    Bot,
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    RatingPoint,
    VersionRating,
)
from arena.ratings import (
    Table,
    fit_ratings,
    live_elo,
    places_from_scores,
    rated_as,
    shown_ratings,
)
from arena.text import clean_json, clean_text
from arena.uploads import UploadError, check_upload
from bots_sdk.builtin import BUILTIN
from engine.record import replay
from engine.rules import RuleSet

#: A claimed match is given to another worker once its lease has passed (MATCH_LEASE_SECONDS).
LEASE_SECONDS = int(getattr(settings, "MATCH_LEASE_SECONDS", 20 * 60))
#: A person's game outlasts a bot match: its lease (and its runner's time limit) is this
#: long, more than its person may take (HUMAN_GAME_SECONDS and HUMAN_AWAY_SECONDS) and its
#: bots (a bot match's lease) together.
HUMAN_LEASE_SECONDS = int(getattr(settings, "HUMAN_GAME_LEASE_SECONDS", 3600))


def lease_seconds(kind: str) -> int:
    """How long a claim on a match of ``kind`` holds once its runner began."""
    return HUMAN_LEASE_SECONDS if kind == Match.Kind.HUMAN else LEASE_SECONDS


#: Claims of a match before it is marked failed (platform failures only).
MAX_ATTEMPTS = 3
VALIDATION_HANDS = 2
#: The built-ins a new version plays its validation match against.
VALIDATORS = ("low", "random", "heuristic")
#: The highest target score of a match a user asks for (a challenge, a tournament): a game to
#: the target ends after at most a few dozen hands of ordinary play.
MAX_TARGET = 500
#: Hands a challenge may ask for.
CHALLENGE_MAX_HANDS = 50
#: Hands a tournament table may ask for.
TOURNAMENT_MAX_HANDS = 200
#: The largest points any one card (or the JD bonus, or the moon) may be worth in a rules
#: spec a user sends: keeps every total far inside the database's integers.
MAX_CARD_POINTS = 100

logger = logging.getLogger(__name__)


def new_seed() -> int:
    """A deal seed nobody can guess or reproduce: drawn from the operating system's
    cryptographic source, stored with the match, revealed once it is finished."""
    return secrets.randbits(62)


def _send(task_name: str, args: list[Any], **options: Any) -> bool:
    """Send a task now; a broker that fails is logged, never raised (what was written stays
    written: the periodic reaper sends the message again)."""
    try:
        # The project's Celery app, without importing the project (arena sits below it).
        current_app.send_task(task_name, args=args, **options)
    except Exception:
        logger.exception(
            "could not send %s%r: the broker failed; the reaper will resend it",
            task_name,
            tuple(args),
        )
        return False
    return True


def _enqueue(task_name: str, *args: Any, **options: Any) -> None:
    """Send a task once the current transaction commits (never before, and never rolling it
    back: a broker error after the commit is logged by :func:`_send`)."""
    transaction.on_commit(lambda: _send(task_name, list(args), **options))


# --- accounts and bots --------------------------------------------------------------------


def user_create(*, username: str, password: str, email: str = "") -> Any:
    """A new account; ``email`` (optional) is where a password reset is sent."""
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise ValidationError({"username": gettext("that username is taken")})
    user = User(username=username, email=User.objects.normalize_email(email))
    user.set_password(password)
    user.full_clean(exclude=["password"])
    user.save()
    return user


def user_email_set(*, user: Any, email: str, password: str) -> Any:
    """Change the address a password reset is sent to ("" for none). The current password is
    asked for: whoever holds only a stolen session or API token must not be able to send the
    account's reset link to themselves."""
    if not user.check_password(password):
        raise ValidationError({"password": gettext("that is not your password")})
    user.email = get_user_model().objects.normalize_email(email)
    user.save(update_fields=["email"])
    return user


# --- API tokens (arena.tokens: keys, digests, refusals) ----------------------------------------


def _token_limit() -> int:
    return int(settings.API_TOKENS_PER_USER)


@transaction.atomic
def token_create(*, user: Any, name: str) -> tuple[ApiToken, str]:
    """A new API token for ``user``, and its key: the only time the key is known. It works for
    ``API_TOKEN_DAYS``. One beyond ``API_TOKENS_PER_USER`` live tokens revokes the least
    recently used (its holder is told why); of the dead ones only as many are remembered."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one at a time
    now = timezone.now()
    key = tokens.new_key()
    token = ApiToken.objects.create(
        user=user,
        name=clean_text(name).strip()[:64] or "API",
        prefix=tokens.key_prefix(key),
        digest=tokens.key_digest(key),
        created=now,
        expires=now + timedelta(days=settings.API_TOKEN_DAYS),
    )
    live = ApiToken.objects.filter(user=user, revoked__isnull=True, expires__gt=now)
    surplus = live.order_by(Coalesce("last_used", "created").desc(), "-id")[_token_limit() :]
    ApiToken.objects.filter(pk__in=[t.pk for t in surplus]).update(
        revoked=now, revoked_why=ApiToken.Revoked.LIMIT
    )
    dead = ApiToken.objects.filter(Q(revoked__isnull=False) | Q(expires__lte=now), user=user)
    forgotten = dead.order_by("-created", "-id")[_token_limit() :]
    ApiToken.objects.filter(pk__in=[t.pk for t in forgotten]).delete()
    return token, key


def token_used(*, token: ApiToken, now: Any) -> None:
    """Note that ``token`` signed a request in: written at most once a minute, so that using
    a token costs no write per request."""
    if token.last_used is not None and now - token.last_used < timedelta(minutes=1):
        return
    ApiToken.objects.filter(pk=token.pk).update(last_used=now)
    token.last_used = now


def token_revoke(*, token: ApiToken) -> None:
    """Revoke ``token`` (again: harmless, the first revocation stands)."""
    ApiToken.objects.filter(pk=token.pk, revoked__isnull=True).update(
        revoked=timezone.now(), revoked_why=ApiToken.Revoked.OWNER
    )


def tokens_revoke(*, user: Any, keep: ApiToken | None = None) -> int:
    """Revoke every token of ``user`` but ``keep`` (the one presented); how many."""
    live = ApiToken.objects.filter(user=user, revoked__isnull=True)
    if keep is not None:
        live = live.exclude(pk=keep.pk)
    return live.update(revoked=timezone.now(), revoked_why=ApiToken.Revoked.OWNER)


@transaction.atomic
def token_renew(*, token: ApiToken) -> tuple[ApiToken, str]:
    """A fresh token (same name, a full ``API_TOKEN_DAYS``) for a live ``token``, which is
    revoked. Only once: of two renewals of one token at the same time, the second is refused."""
    now = timezone.now()
    taken = ApiToken.objects.filter(pk=token.pk, revoked__isnull=True, expires__gt=now).update(
        revoked=now, revoked_why=ApiToken.Revoked.RENEWED
    )
    if taken != 1:
        raise ValidationError(
            {"detail": gettext("this token was renewed or revoked already; log in again")}
        )
    return token_create(user=token.user, name=token.name)


# --- password reset (Django's machinery: PasswordResetForm, default_token_generator) ------------

#: The templates of the reset mail.
RESET_SUBJECT = "arena/password_reset_subject.txt"
RESET_MAIL = "arena/password_reset_email.txt"


def password_reset_send(*, email: str, domain: str, use_https: bool) -> None:
    """Mail a one-use link to choose a new password to every active account of ``email``;
    nothing for an address nobody has (the caller answers the same either way). A mail that
    cannot be sent is logged by Django (``django.contrib.auth``), never raised."""
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        raise ValidationError({"email": form.errors["email"]})
    form.save(
        domain_override=domain,
        use_https=use_https,
        subject_template_name=RESET_SUBJECT,
        email_template_name=RESET_MAIL,
    )


#: A reset link's ``uid`` decoded: an account's id.
_RESET_UID = re.compile(r"[1-9][0-9]{0,17}")


@transaction.atomic
def password_reset_confirm(*, uid: str, token: str, password: str) -> Any:
    """Set the password of the account a reset link names, if the link (``uid``, ``token``)
    is good, and revoke every API token of the account. Its sessions end by themselves: each
    carries a hash of the password it was opened under. A link works once (its token is made
    from the password it changes): checked under a lock on the account, so two uses of one
    link at once cannot both succeed."""
    try:
        pk = urlsafe_base64_decode(uid).decode()
    except (TypeError, ValueError):  # not base64, not text
        pk = ""
    user = None
    if _RESET_UID.fullmatch(pk):
        user = get_user_model().objects.select_for_update().filter(pk=int(pk)).first()
    if user is None or not default_token_generator.check_token(user, token):
        raise ValidationError(
            {
                "token": gettext(
                    "this reset link is not valid: it was used already, is too old, or was "
                    "copied wrong; ask for a new one"
                )
            }
        )
    try:
        validate_password(password, user=user)
    except ValidationError as exc:
        raise ValidationError({"new_password": exc.messages}) from None
    user.set_password(password)
    user.save(update_fields=["password"])
    ApiToken.objects.filter(user=user, revoked__isnull=True).update(
        revoked=timezone.now(), revoked_why=ApiToken.Revoked.PASSWORD_RESET
    )
    return user


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


def user_language_set(*, user: Any, language: str) -> None:
    """Remember the pages' language a user chose ("" for the browser's)."""
    from arena.models import Profile

    Profile.objects.update_or_create(user=user, defaults={"language": language})


def ladder_join(*, ladder: Ladder, bot: Bot) -> tuple[LadderEntry, bool]:
    """Enter ``bot`` in ``ladder`` (once: entering again changes nothing); the entry and
    whether it is new."""
    return LadderEntry.objects.get_or_create(ladder=ladder, bot=bot)


@transaction.atomic
def ladder_enter(*, ladder: Ladder, bot: Bot, user: Any) -> tuple[LadderEntry, bool]:
    """The owner enters a bot in a ladder (:func:`ladder_join`: entering again changes
    nothing); the entry and whether it is new."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner enters it in a ladder")
    return ladder_join(ladder=ladder, bot=bot)


@transaction.atomic
def version_upload(*, bot: Bot, user: Any, filename: str, data: bytes) -> BotVersion:
    """Store a new version (checked first: nothing is stored for a refused upload) and queue
    its validation, within the owner's allowance of versions waiting for theirs
    (``UPLOAD_MAX_WAITING`` pending or validating at once, all their bots together)."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner uploads versions")
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
    _enqueue("arena.version_validate", version.pk)
    return version


def version_validate(*, version_id: int) -> BotVersion:
    """Validate a version in this process, through the same job and store as a runner's
    (:func:`arena.jobs.version_validate_here`). Workers send validations to the runners
    instead (:func:`arena.jobs.version_dispatch`)."""
    from arena import jobs  # arena.jobs builds on this module

    return jobs.version_validate_here(version_id=version_id)


@transaction.atomic
def version_settle(*, version_id: int, claim: str, log: list[str], accepted: bool) -> bool:
    """End a validation under its claim: active (the bot's previous active version retires)
    or rejected, with the log its owner reads. A stale or repeated result changes nothing;
    it always ends the version's ``validating``."""
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
        if before is not None:  # is the new one stronger? (arena.comparisons)
            _enqueue("arena.comparison_start", before.pk, version.pk)
            log_compare = f"compared with v{before.number} on duplicate deals: see the bot's page"
        else:
            log_compare = ""
        BotVersion.objects.filter(bot_id=version.bot_id, status=BotVersion.Status.ACTIVE).update(
            status=BotVersion.Status.RETIRED
        )
        version.status = BotVersion.Status.ACTIVE
        log = [*log, "active: it now plays for the bot", *([log_compare] if log_compare else [])]
        Bot.objects.filter(pk=version.bot_id).update(retired_at=None)  # back in use
        if first:  # the bot's first active version: it enters the ladders chosen for it
            joined = [
                ladder.name
                for ladder in version.bot.join_ladders.filter(active=True).order_by("name")
                if ladder_join(ladder=ladder, bot=version.bot)[1]
            ]
            if joined:
                log.append(f"entered the ladder(s): {', '.join(joined)}")
    else:
        version.status = BotVersion.Status.REJECTED
        if not log or not log[-1].startswith("this is the platform's doing"):
            log = [*log, "rejected: fix the faults above and upload again"]
    version.validation_log = clean_text("\n".join(str(line) for line in log))
    version.save(update_fields=["status", "validation_log"])
    return True


# --- matches ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatSpec:
    """Who sits in a seat: a bot version, or a built-in by name (and its ladder or
    tournament entry)."""

    version: BotVersion | None = None
    builtin: str = ""
    entry: LadderEntry | None = None
    tournament_entry: Any = None
    #: A person's seat: the secret of the page that plays it, and the signed-in user if any.
    human_token: str = ""
    person: Any = None


@transaction.atomic
def match_create(
    *,
    kind: str,
    seats: list[SeatSpec],
    rules: Any = "standard",
    hands: int | None = None,
    seed: int | None = None,
    ladder: Ladder | None = None,
    requested_by: Any = None,
    tournament: Any = None,
    round: int | None = None,
    table: int | None = None,
    rotation: int = 0,
    comparison: Any = None,
) -> Match:
    ruleset = RuleSet.from_spec(rules)
    if len(seats) != ruleset.players:
        raise ValidationError(
            {
                "seats": gettext("these rules seat %(players)s players, not %(seats)s")
                % {"players": ruleset.players, "seats": len(seats)}
            }
        )
    match = Match.objects.create(
        kind=kind,
        rules=ruleset.to_spec(),
        hands=hands,
        ladder=ladder,
        requested_by=requested_by,
        tournament=tournament,
        comparison=comparison,
        round=round,
        table=table,
        rotation=rotation,
        seed=seed if seed is not None else new_seed(),
        engine_version=engine.__version__,
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(
            match=match,
            seat=i,
            version=s.version,
            builtin=s.builtin,
            entry=s.entry,
            tournament_entry=s.tournament_entry,
            human_token=s.human_token,
            person=s.person,
        )
        for i, s in enumerate(seats)
    )
    _enqueue("arena.match_run", match.pk)
    return match


def rules_within_bounds(rules: Any, *, hands: int | None, max_hands: int) -> Any:
    """The :class:`~engine.rules.RuleSet` of a match a user asks for, if it stays within the
    platform's bounds (a hand count, a target, card points); a ValidationError naming the
    limit otherwise. Operators' ladders are not held to them."""
    ruleset = RuleSet.from_spec(rules)
    if hands is not None and not 1 <= hands <= max_hands:
        raise ValidationError(
            {
                "hands": gettext("from 1 to %(most)s hands; not %(hands)s")
                % {"most": max_hands, "hands": hands}
            }
        )
    if ruleset.target > MAX_TARGET:
        raise ValidationError(
            {
                "rules": gettext("a target of %(target)s points is over the limit of %(limit)s")
                % {"target": ruleset.target, "limit": MAX_TARGET}
            }
        )
    points = [*ruleset.heart_points, ruleset.queen_points, ruleset.jd_bonus, ruleset.moon_amount]
    if any(abs(p) > MAX_CARD_POINTS for p in points):
        raise ValidationError(
            {
                "rules": gettext(
                    "card points, the JD bonus and the moon are limited to -%(limit)s to %(limit)s"
                )
                % {"limit": MAX_CARD_POINTS}
            }
        )
    if hands is None and not ruleset.can_score:
        # the game would play to the engine's hand cap (engine.state.MAX_HANDS) for nothing
        raise ValidationError(
            {
                "rules": gettext(
                    "no hand can add points under these rules, so a game to %(target)s never "
                    "ends: give a number of hands"
                )
                % {"target": ruleset.target}
            }
        )
    return ruleset


@transaction.atomic
def challenge_create(
    *, user: Any, seats: list[SeatSpec], rules: Any = "standard", hands: int | None = None
) -> Match:
    """A user's challenge, within the bounds (:func:`rules_within_bounds`) and within the
    user's allowance of open challenges (``CHALLENGE_MAX_OPEN`` queued or running at once)."""
    ruleset = rules_within_bounds(rules, hands=hands, max_hands=CHALLENGE_MAX_HANDS)
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one at a time
    limit = settings.CHALLENGE_MAX_OPEN
    open_now = Match.objects.filter(
        kind=Match.Kind.CHALLENGE,
        requested_by=user,
        status__in=[Match.Status.QUEUED, Match.Status.RUNNING],
    ).count()
    if open_now >= limit:
        raise ValidationError(
            gettext(
                "you have %(open)s challenges queued or running; the limit is %(limit)s: "
                "ask again when one has finished"
            )
            % {"open": open_now, "limit": limit}
        )
    return match_create(
        kind=Match.Kind.CHALLENGE, seats=seats, rules=ruleset, hands=hands, requested_by=user
    )


def human_game_create(
    *,
    user: Any,
    opponents: list[SeatSpec],
    rules: Any = "standard",
    hands: int | None = 1,
    seat: int = 0,
    seed: int | None = None,
) -> tuple[Match, str]:
    """A person's game against ``opponents`` (kind ``human``, never rated), the person in
    ``seat``; returns the match and the secret of the page that plays the seat. ``user`` is
    the signed-in user, or None for an anonymous visitor (the web's throttle limits those).
    ``seed`` is for tests only: a person who knew it could compute every hand."""
    ruleset = rules_within_bounds(rules, hands=hands, max_hands=CHALLENGE_MAX_HANDS)
    if len(opponents) + 1 != ruleset.players:
        raise ValidationError(
            {
                "opponents": gettext("these rules seat %(players)s players: choose %(count)s")
                % {"players": ruleset.players, "count": ruleset.players - 1}
            }
        )
    if not 0 <= seat < ruleset.players:
        raise ValidationError({"seat": gettext("no such seat")})
    token = secrets.token_urlsafe(24)
    person = SeatSpec(human_token=token, person=user)
    seats = [*opponents[:seat], person, *opponents[seat:]]
    match = match_create(
        kind=Match.Kind.HUMAN, seats=seats, rules=ruleset, hands=hands, requested_by=user, seed=seed
    )
    return match, token


def match_claim(*, match_id: int, claim: str = "") -> Match | None:
    """Compare-and-set: queued (or running with an expired lease) → running, attempt + 1,
    under a new claim token (a result is stored only under it)."""
    now = timezone.now()
    kind = Match.objects.filter(pk=match_id).values_list("kind", flat=True).first() or ""
    claimed = Match.objects.filter(
        Q(status=Match.Status.QUEUED) | Q(status=Match.Status.RUNNING, lease_until__lt=now),
        pk=match_id,
        attempts__lt=MAX_ATTEMPTS,
    ).update(
        status=Match.Status.RUNNING,
        attempts=F("attempts") + 1,
        lease_until=now + timedelta(seconds=lease_seconds(kind)),
        started_at=now,
        claim_token=claim,
        playing_since=None,
    )
    return Match.objects.get(pk=match_id) if claimed else None


def match_run(*, match_id: int) -> Match | None:
    """Claim, play and finish a match in this process, through the same job and store as a
    runner's (:func:`arena.jobs.match_play_here`); None when it is claimed elsewhere or done.
    Workers send matches to the runners instead (:func:`arena.jobs.match_dispatch`)."""
    from arena import jobs  # arena.jobs builds on this module

    return jobs.match_play_here(match_id=match_id)


@transaction.atomic
def match_finish(
    *, match_id: int, attempt: int, result: dict[str, Any], claim: str | None = None
) -> bool:
    """Store a match's result once: only the holder of this attempt's claim (and token,
    when given) may. What the bots wrote (stderr, fault details, names) is cleaned first
    (:mod:`arena.text`)."""
    now = timezone.now()
    result = clean_json(result)
    holder = Q(claim_token=claim) if claim is not None else Q()
    stored = Match.objects.filter(
        holder, pk=match_id, status=Match.Status.RUNNING, attempts=attempt
    ).update(status=Match.Status.FINISHED, record=result, finished_at=now, lease_until=None)
    if not stored:
        return False  # a duplicate or stale worker: the first result stands
    totals, hand_scores = result_scores(result)  # (raising, it rolls the update back)
    places = places_from_scores(totals)
    for seat in MatchSeat.objects.filter(match_id=match_id).order_by("seat"):
        extra = result["seats"][seat.seat]
        seat.score = totals[seat.seat]
        seat.rank = places[seat.seat]
        seat.faults = extra["faults"]
        seat.stderr = extra["stderr"]
        seat.hand_scores = hand_scores[seat.seat]
        seat.save(update_fields=["score", "rank", "faults", "stderr", "hand_scores"])
    match = Match.objects.get(pk=match_id)
    if match.ladder_id and match.kind in (Match.Kind.LADDER, Match.Kind.TOURNAMENT):
        live_elo_apply(match=match)
        ratings_schedule(ladder_id=match.ladder_id)
    if match.tournament_id:
        _enqueue("arena.tournament_advance", match.tournament_id)
    if match.comparison_id:
        _enqueue("arena.comparison_advance", match.comparison_id)
    return True


#: Finished matches within this many seconds share one ratings refit.
RATINGS_DEBOUNCE_SECONDS = 5


def ratings_schedule(*, ladder_id: int) -> bool:
    """Debounced: one refit of the ladder's ratings shortly after a burst of results. A cache
    that fails neither raises nor rolls back the result being stored: the refit is sent
    without the debounce (and the next result schedules another)."""
    try:
        first = cache.add(f"bidel:ratings:{ladder_id}", True, timeout=RATINGS_DEBOUNCE_SECONDS * 4)
    except Exception:
        logger.exception("the cache failed: ladder %s's refit is scheduled undebounced", ladder_id)
        first = True
    if not first:
        return False
    _enqueue("arena.ratings_recompute", ladder_id, countdown=RATINGS_DEBOUNCE_SECONDS)
    return True


class ScoresDisagree(ValueError):
    """A result whose scores are not those its own record gives."""


def result_scores(result: dict[str, Any]) -> tuple[list[int], list[list[int]]]:
    """A game result's totals and per-seat hand scores, as the runner sent them, audited: the
    record is replayed by the engine and must give the same (a result from before runners
    sent them is read from the replay). Raises on a record that does not replay, and
    :class:`ScoresDisagree` on scores it does not give."""
    state = replay({k: result[k] for k in ("rules", "seed", "hands") if k in result})
    played = [h for h in state.history if not h.void]
    totals = list(state.totals)
    hand_scores = [[h.scores[seat] for h in played] for seat in range(len(totals))]
    sent = (result.get("totals"), result.get("hand_scores"))
    if sent != (None, None) and sent != (totals, hand_scores):
        raise ScoresDisagree(
            f"the result's scores {sent[0]} are not its record's {totals} (hand by hand "
            "or in total)"
        )
    return totals, hand_scores


@transaction.atomic
def match_attempt_failed(*, match_id: int, attempt: int, error: str) -> None:
    """A platform failure: back to the queue, or failed (never rated) after MAX_ATTEMPTS."""
    match = Match.objects.select_for_update().get(pk=match_id)
    if match.status != Match.Status.RUNNING or match.attempts != attempt:
        return
    match.error = clean_text(error)[:2000]
    if match.attempts >= MAX_ATTEMPTS:
        match.status = Match.Status.FAILED
    else:
        match.status = Match.Status.QUEUED
        _enqueue("arena.match_run", match.pk)
    match.lease_until = None
    match.save(update_fields=["status", "error", "lease_until"])


@transaction.atomic
def match_fail(*, match_id: int, attempt: int, error: str) -> bool:
    """A match that cannot be played as given (its job was refused): failed at once, with
    the reason, never rated."""
    return bool(
        Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, attempts=attempt).update(
            status=Match.Status.FAILED, error=clean_text(error)[:2000], lease_until=None
        )
    )


@transaction.atomic
def match_requeue(*, match_id: int) -> bool:
    """Operators: give a failed or stuck match a fresh set of attempts (not a finished one)."""
    updated = Match.objects.filter(
        pk=match_id, status__in=[Match.Status.FAILED, Match.Status.RUNNING, Match.Status.QUEUED]
    ).update(status=Match.Status.QUEUED, attempts=0, lease_until=None)
    if updated:
        _enqueue("arena.match_run", match_id)
    return bool(updated)


#: A match queued this long without a claim has its message sent again (MATCH_RESEND_SECONDS):
#: a broker that lost its queue (a restarted Redis, the embedded broker's killed worker) loses
#: no match, and a duplicate message is harmless (the claim is a compare-and-set).
RESEND_SECONDS = int(getattr(settings, "MATCH_RESEND_SECONDS", 120))


def matches_reap() -> int:
    """Re-queue matches whose worker was lost (expired lease; failed once out of attempts),
    and send again the messages of matches queued too long and of versions waiting too long
    for their validation (a broker that failed when they were stored)."""
    now = timezone.now()
    # Only a match a runner began to play loses its claim with its lease: one still waiting
    # for a runner is sent again instead (arena.jobs.matches_resend), costing no attempt.
    expired = list(
        Match.objects.filter(
            status=Match.Status.RUNNING, lease_until__lt=now, playing_since__isnull=False
        ).values_list("pk", "attempts")
    )
    for match_id, attempts in expired:
        match_attempt_failed(
            match_id=match_id, attempt=attempts, error="lease expired: the worker was lost"
        )
    stale = Match.objects.filter(
        status=Match.Status.QUEUED, created_at__lt=now - timedelta(seconds=RESEND_SECONDS)
    ).values_list("pk", flat=True)
    for match_id in stale:
        _enqueue("arena.match_run", match_id)
    waiting = BotVersion.objects.filter(
        status=BotVersion.Status.PENDING, created_at__lt=now - timedelta(seconds=RESEND_SECONDS)
    ).values_list("pk", flat=True)
    for version_id in waiting:
        _enqueue("arena.version_validate", version_id)
    return len(expired)


# --- ratings ------------------------------------------------------------------------------


@transaction.atomic
def live_elo_apply(*, match: Match) -> bool:
    """Apply a finished ladder match to the entries' live Elo, exactly once."""
    if not Match.objects.filter(pk=match.pk, live_elo_applied=False).update(live_elo_applied=True):
        return False
    seats = list(match.seats.select_related("entry").order_by("seat"))
    entries = [s.entry for s in seats]
    if any(e is None for e in entries):
        return True
    locked = {
        e.pk: e
        for e in LadderEntry.objects.select_for_update().filter(pk__in=[e.pk for e in entries])
    }  # type: ignore[union-attr]
    names = [str(e.pk) for e in entries]  # type: ignore[union-attr]
    table = Table(tuple(names), tuple(s.rank for s in seats))  # type: ignore[misc]
    after = live_elo({str(pk): e.live_elo for pk, e in locked.items()}, table)
    for pk, entry in locked.items():
        entry.live_elo = after[str(pk)]
        entry.save(update_fields=["live_elo"])
    return True


def ladder_log(ladder: Ladder) -> tuple[list[Table], dict[str, tuple[int, int | None]]]:
    """The ladder's rated history — every finished ladder match (and match of a tournament
    that feeds it), in order, its seats as :func:`rated_as` names them — and, for each name,
    its (entry id, version id)."""
    tables = []
    owners: dict[str, tuple[int, int | None]] = {}
    matches = Match.objects.filter(
        ladder=ladder,
        kind__in=[Match.Kind.LADDER, Match.Kind.TOURNAMENT],
        status=Match.Status.FINISHED,
    )
    seats = (
        MatchSeat.objects.filter(match__in=matches)
        .order_by("match_id", "seat")
        .values_list("match_id", "entry_id", "version_id", "rank")
    )
    current: int | None = None
    players: list[str] = []
    places: list[int] = []
    for match_id, entry_id, version_id, rank in seats:
        if match_id != current and current is not None:
            tables.append(Table(tuple(players), tuple(places)))
            players, places = [], []
        current = match_id
        name = rated_as(entry_id, version_id)
        owners.setdefault(name, (entry_id, version_id))
        players.append(name)
        places.append(rank)
    if current is not None:
        tables.append(Table(tuple(players), tuple(places)))
    return tables, owners


@transaction.atomic
def ratings_recompute(*, ladder: Ladder) -> list[Rating]:
    """Refit the ladder's ratings from its whole match log (a pure function of it): every
    bot version that played is rated on its own matches alone (:class:`VersionRating`); each
    entry's :class:`Rating`, what the rankings show, is its active version's once fitted,
    else its newest fitted version's (a built-in's, its own)."""
    try:
        cache.delete(f"bidel:ratings:{ladder.pk}")  # results from now on schedule the next refit
    except Exception:  # the key expires by itself: a refit is not worth failing for it
        logger.exception(
            "the cache failed: ladder %s's debounce key stays until it expires", ladder.pk
        )
    tables, owners = ladder_log(ladder)
    builtins = ladder.entries.exclude(builtin="").values_list("pk", flat=True)
    for pk in builtins:  # (the anchors are fitted whether they have played or not)
        owners.setdefault(rated_as(pk, None), (pk, None))
    fitted = fit_ratings(tables, [rated_as(pk, None) for pk in builtins])
    before = {
        rated_as(entry, version): matches
        for entry, version, matches in [
            *VersionRating.objects.filter(entry__ladder=ladder).values_list(
                "entry_id", "version_id", "matches"
            ),
            *Rating.objects.filter(entry__ladder=ladder, version=None).values_list(
                "entry_id", "version_id", "matches"
            ),
        ]
    }
    VersionRating.objects.filter(entry__ladder=ladder).delete()
    Rating.objects.filter(entry__ladder=ladder).delete()

    def fit_of(name: str) -> dict[str, Any]:
        entry, version = owners[name]
        r = fitted[name]
        return {
            "entry_id": entry,
            "version_id": version,
            "rating": r.rating,
            "low": r.low,
            "high": r.high,
            "matches": r.matches,
        }

    # The history gains a point for each one that has played since the last refit.
    RatingPoint.objects.bulk_create(
        RatingPoint(**fit_of(name)) for name, r in fitted.items() if before.get(name) != r.matches
    )
    VersionRating.objects.bulk_create(
        VersionRating(**fit_of(name), fitted_on=len(tables))
        for name in fitted
        if owners[name][1] is not None
    )
    # What each entry shows: a built-in's own fit; a bot's active version's, else its newest.
    active = set(
        BotVersion.objects.filter(
            status=BotVersion.Status.ACTIVE, bot__entries__ladder=ladder
        ).values_list("pk", flat=True)
    )
    numbers = dict(
        BotVersion.objects.filter(
            pk__in=[v for _, v in owners.values() if v is not None]
        ).values_list("pk", "number")
    )
    shown = shown_ratings(list(fitted), owners, active, numbers)
    ratings = [Rating(**fit_of(name), fitted_on=len(tables)) for name in shown.values()]
    return Rating.objects.bulk_create(ratings)


# --- ladders ------------------------------------------------------------------------------


def ladder_add_builtins(*, ladder: Ladder) -> int:
    """Enter every built-in bot in the ladder (the fixed reference points); returns how many
    were missing."""
    added = 0
    for name in sorted(BUILTIN):
        _, created = LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)
        added += created
    return added


def _active_version(entry: LadderEntry) -> BotVersion | None:
    if entry.builtin:
        return None
    return entry.bot.versions.filter(status=BotVersion.Status.ACTIVE).order_by("-number").first()  # type: ignore[union-attr]


def ladder_fill(*, ladder: Ladder, rng: random.Random | None = None) -> list[Match]:
    """Queue tables up to the ladder's concurrency, favouring entries with few matches and
    tables of close ratings."""
    rng = rng or random.Random()
    in_flight = ladder.matches.filter(
        status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()
    room = ladder.concurrency - in_flight
    entries = []
    for entry in ladder.entries.select_related("bot").order_by("pk"):
        if entry.bot_id and (entry.bot.disabled or _active_version(entry) is None):  # type: ignore[union-attr]
            continue
        entries.append(entry)
    if room <= 0 or len(entries) < ladder.table_size:
        return []
    # Matches played by what sits now: a bot's active version (a new version is the
    # least-played, so it gets its first matches, and its own rating, at once), a built-in.
    played = {
        e.pk: MatchSeat.objects.filter(
            entry=e, match__status=Match.Status.FINISHED, version=_active_version(e)
        ).count()
        for e in entries
    }
    rating = {e.pk: getattr(getattr(e, "rating", None), "rating", e.live_elo) for e in entries}
    created = []
    for _ in range(room):
        # The least-played entry (ties at random), then the closest ratings among the rest.
        first = min(entries, key=lambda e: (played[e.pk], rng.random()))
        others = sorted(
            (e for e in entries if e.pk != first.pk),
            key=lambda e: (
                abs(rating[e.pk] - rating[first.pk])
                + 50 * played[e.pk] / (1 + max(played.values())),
                rng.random(),
            ),
        )
        table = [first, *others[: ladder.table_size - 1]]
        rng.shuffle(table)
        seats = [SeatSpec(version=_active_version(e), builtin=e.builtin, entry=e) for e in table]
        created.append(
            match_create(
                kind=Match.Kind.LADDER,
                seats=seats,
                rules=ladder.rules,
                hands=ladder.hands,
                ladder=ladder,
            )
        )
        for e in table:
            played[e.pk] += 1
    return created
