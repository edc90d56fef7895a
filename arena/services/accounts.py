"""Accounts: users, their e-mail and language, API tokens, password resets."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone, translation
from django.utils.http import urlsafe_base64_decode
from django.utils.translation import gettext

from arena import tokens
from arena.models import (
    ApiToken,
    Profile,
)
from arena.services import messages
from arena.text import clean_text


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


def _token_limit() -> int:
    return int(settings.API_TOKENS_PER_USER)


@transaction.atomic
def token_create(
    *, user: Any, name: str, expires: Any = None, session_key: str = ""
) -> tuple[ApiToken, str]:
    """A new API token for ``user``, and its key: the only time the key is known. It works for
    ``API_TOKEN_DAYS``, or until ``expires`` when that is sooner (a renewal's, a web session's
    end). Made by a web session (``session_key``), it ends with it: :func:`tokens_end_session`
    at its log-out. One beyond
    ``API_TOKENS_PER_USER`` live tokens revokes the least recently used (its holder is told
    why); of the dead ones only as many are remembered."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one at a time
    now, longest = timezone.now(), timedelta(days=settings.API_TOKEN_DAYS)
    key = tokens.new_key()
    token = ApiToken.objects.create(
        user=user,
        name=clean_text(name).strip()[:64] or "API",
        prefix=tokens.key_prefix(key),
        digest=tokens.key_digest(key),
        created=now,
        expires=min(expires or now + longest, now + longest),
        session_key=session_key,
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


def tokens_end_session(*, user: Any, session_key: str | None) -> int:
    """Revoke the tokens a web session of ``user`` made, as it ends (a log-out); how many."""
    if not session_key:
        return 0
    live = ApiToken.objects.filter(user=user, session_key=session_key, revoked__isnull=True)
    return live.update(revoked=timezone.now(), revoked_why=ApiToken.Revoked.LOGOUT)


@transaction.atomic
def token_renew(*, token: ApiToken) -> tuple[ApiToken, str]:
    """A fresh key for a live ``token``, which is revoked: same name, same expiry. A renewal
    changes the key (one copied before it is dead), never the life: a token ends
    ``API_TOKEN_DAYS`` after the log-in with a password that made it, however often it is
    renewed, so a thief holding a key cannot keep it alive. Only once: of two renewals of one
    token at the same time, the second is refused."""
    now = timezone.now()
    taken = ApiToken.objects.filter(pk=token.pk, revoked__isnull=True, expires__gt=now).update(
        revoked=now, revoked_why=ApiToken.Revoked.RENEWED
    )
    if taken != 1:
        raise ValidationError(
            {"detail": gettext("this token was renewed or revoked already; log in again")}
        )
    return token_create(
        user=token.user, name=token.name, expires=token.expires, session_key=token.session_key
    )


#: The templates of the reset mail.
RESET_SUBJECT = "arena/password_reset_subject.txt"


RESET_MAIL = "arena/password_reset_email.txt"


#: The task that mails the reset links (:func:`password_reset_send`, in a worker).
RESET_TASK = "arena.password_reset_mail"


class ResetUnavailable(Exception):
    """Password resets cannot be offered here (the site's address is not configured)."""


def reset_origin(*, host: str, secure: bool) -> tuple[str, bool]:
    """Where a reset link points: (domain, https). The site's address (``SITE_URL``) when it
    is set, whatever host the request named: a request's Host header is the asker's to
    choose, and the link goes to someone else. Without it, with DEBUG the request's
    (development); else :class:`ResetUnavailable` (refused, loudly, not a link to a
    host the asker picked)."""
    if settings.SITE_URL:
        scheme, _, domain = settings.SITE_URL.partition("://")
        return domain, scheme == "https"
    if settings.DEBUG:
        return host, secure
    raise ResetUnavailable(
        gettext("password resets are not available: the operator has not set SITE_URL")
    )


def password_reset_request(*, email: str, domain: str, use_https: bool, language: str = "") -> None:
    """Ask for the reset links of ``email`` to be mailed, by a worker
    (:func:`password_reset_send`): the request does the same work whether or not an account
    has the address (checks its form, queues one message), so its time says nothing of
    that; looking the address up and talking to the mail server happen after the answer.
    The mail is written in ``language`` (the request's: the one active, by default)."""
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        raise ValidationError({"email": form.errors["email"]})
    language = language or translation.get_language() or settings.LANGUAGE_CODE
    messages.enqueue(RESET_TASK, form.cleaned_data["email"], domain, use_https, language)


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


def user_language_set(*, user: Any, language: str) -> None:
    """Remember the pages' language a user chose ("" for the browser's)."""

    Profile.objects.update_or_create(user=user, defaults={"language": language})
