"""People at the table: the workflows that keep a person's games at ``/play/`` bounded.

- **Tables**: ``HUMAN_GAMES_MAX_OPEN`` people's games open at once (queued or running), all
  visitors together; they are played by runners of their own (the ``runner.people`` queue),
  so a person's game never holds a bot match's slot, and one no such runner begins within
  ``HUMAN_START_SECONDS`` ends, saying so (:func:`human_games_expire`).
- **One open game per visitor**: per signed-in user, per address (fresh cookies are no fresh
  visitor) and per browser (its seat cookie names its open game: the page checks that before
  it calls here). Each is a :class:`~arena.models.PlayHold` row with a unique key, so two
  requests at once cannot both win one.
- **Leaving**: :func:`human_game_leave` ends a game no runner began, and tells the runner of
  one being played, through the seat's mailbox, that the person has left: the fallback plays
  the rest at the bots' speed and the game is stored as any other (its record verifies).

The runner's side of the limits (away, the whole game's thinking time, the clock) is
:class:`bots_sdk.referee.players.PersonLimits` and ``HUMAN_CLOCK``, sent in each job.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from arena.models import Match, PlayHold
from arena.services.matches import SeatSpec, human_game_create
from hearts_runner import live

#: A game in one of these holds its table and its visitor.
OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)
#: The cookie that carries a person's seat secret (HttpOnly, SameSite=Strict, path ``/``): the
#: pages at ``/play/<match id>/`` and their socket read it; no address ever holds the secret
#: (an address is written in access logs, browser histories and Referer headers).
SEAT_COOKIE = "bidel_seat"
#: The longest seat cookie read (a secret is 32 characters; a longer value is no seat's).
MAX_SEAT_COOKIE = 64


def seat_cookie(cookies: Any) -> str:
    """The seat secret a request's cookies carry ('' when none, or not one that could be).

    >>> seat_cookie({SEAT_COOKIE: "abc"}), seat_cookie({SEAT_COOKIE: "x" * 65}), seat_cookie(None)
    ('abc', '', '')
    """
    value = cookies.get(SEAT_COOKIE, "") if isinstance(cookies, dict) else ""
    return value if isinstance(value, str) and len(value) <= MAX_SEAT_COOKIE else ""


def address_key(address: str) -> str:
    """The hold of a client's address: IPv4 whole, IPv6 by its /64 (one subscriber's usual
    share: a visitor who owns a /64 has 2**64 addresses), an IPv4-mapped IPv6 as its IPv4;
    '' when there is no address to hold.

    >>> address_key("203.0.113.7")
    'address:203.0.113.7'
    >>> address_key("2001:db8:1:2:aaaa::9")
    'address:2001:db8:1:2::/64'
    >>> address_key("::ffff:203.0.113.7")
    'address:203.0.113.7'
    >>> address_key("")
    ''
    """
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return f"address:{address.strip()[:100]}" if address.strip() else ""
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return f"address:{parsed.ipv4_mapped}"
        return f"address:{ipaddress.IPv6Network(f'{parsed}/64', strict=False)}"
    return f"address:{parsed}"


@dataclass(frozen=True)
class Visitor:
    """Who asks for a game, as its holds count it: the signed-in user (or None) and the
    client's address (``REMOTE_ADDR``, as the API's throttles take it)."""

    user: Any = None
    address: str = ""

    def keys(self) -> list[str]:
        """What a game of this visitor holds besides its table.

        >>> Visitor(address="203.0.113.7").keys()
        ['address:203.0.113.7']
        """
        keys = [address_key(self.address)]
        if self.user is not None and getattr(self.user, "is_authenticated", False):
            keys.insert(0, f"user:{self.user.pk}")
        return [k for k in keys if k]


class OpenGameError(ValidationError):
    """The visitor has a game open already (``match_id``: which, when known)."""

    def __init__(self, match_id: int | None) -> None:
        self.match_id = match_id
        if match_id is None:
            text = gettext("you have a game open already: finish it or leave it first")
        else:
            text = gettext(
                "you have a game open already (match %(number)s): finish it or leave it first"
            ) % {"number": match_id}
        super().__init__(text)


class TablesFullError(ValidationError):
    """Every table for people is taken (``HUMAN_GAMES_MAX_OPEN``), or there are none."""

    def __init__(self, tables: int) -> None:
        if tables <= 0:
            text = gettext("this site has no tables for people")
        else:
            text = gettext(
                "all %(tables)s tables for people are taken: try again in a few minutes"
            ) % {"tables": tables}
        super().__init__(text)


def _release_over() -> None:
    """Release the holds of games that are over (finished, failed, left): a hold lasts as
    long as its game is open, whichever way it ended."""
    PlayHold.objects.exclude(match__status__in=OPEN).delete()


def _take_table(match: Match, tables: int) -> bool:
    """Hold the first free one of ``tables`` for ``match``; False when all are taken."""
    for number in range(tables):
        try:
            with transaction.atomic():  # a savepoint: a taken table leaves the rest intact
                PlayHold.objects.create(key=f"table:{number}", match=match)
        except IntegrityError:
            continue
        return True
    return False


@transaction.atomic
def human_game_open(
    *,
    visitor: Visitor,
    opponents: list[SeatSpec],
    rules: Any = "standard",
    hands: int | None = 1,
) -> tuple[Match, str]:
    """A visitor's game against ``opponents`` (:func:`arena.services.human_game_create`), if
    the visitor has none open and a table is free; returns the match and the seat's secret.
    Raises :class:`OpenGameError`, :class:`TablesFullError`, or ``ValidationError`` for a
    table the rules refuse."""
    tables = int(settings.HUMAN_GAMES_MAX_OPEN)
    if tables <= 0:
        raise TablesFullError(tables)
    _release_over()
    keys = visitor.keys()
    held = PlayHold.objects.filter(key__in=keys).values_list("match_id", flat=True).first()
    if held is not None:
        raise OpenGameError(held)
    match, token = human_game_create(
        user=visitor.user, opponents=opponents, rules=rules, hands=hands
    )
    try:
        with transaction.atomic():
            PlayHold.objects.bulk_create(PlayHold(key=key, match=match) for key in keys)
    except IntegrityError:  # another request of the same visitor won: this game is undone
        raise OpenGameError(None) from None
    if not _take_table(match, tables):
        raise TablesFullError(tables)  # the game and its holds are undone: nothing is queued
    return match, token


def _take_person_away(token: str) -> None:
    """Tell the runner of a game (if one plays it, or will) that its person has left."""
    try:
        live.shared_mailbox().put(token, live.LEAVE_MESSAGE)
    except Exception:  # noqa: BLE001 — the person's away limit ends the seat all the same
        pass


@transaction.atomic
def human_game_leave(*, match_id: int, token: str) -> bool:
    """The person of seat ``token`` leaves match ``match_id``: a game no runner began ends now
    (failed, saying so, its holds released); in one being played the fallback takes the seat
    at once (the runner reads it from the mailbox). False when the game was over already."""
    if not Match.objects.filter(pk=match_id, status__in=OPEN, seats__human_token=token).exists():
        return False
    Match.objects.filter(pk=match_id, status__in=OPEN, playing_since__isnull=True).update(
        status=Match.Status.FAILED,
        error="the person left before a runner began the game",
        lease_until=None,
    )
    transaction.on_commit(lambda: _take_person_away(token))
    return True


def human_game_expire(*, match_id: int) -> bool:
    """End match ``match_id`` if it is a person's game that no runner has begun within
    ``HUMAN_START_SECONDS`` of being made (no runner serves the people's queue, or every one
    of its slots is taken): failed, with the reason, never waiting on in silence."""
    seconds = int(settings.HUMAN_START_SECONDS)
    cutoff = timezone.now() - timedelta(seconds=seconds)
    waiting = Match.objects.filter(
        pk=match_id,
        kind=Match.Kind.HUMAN,
        status__in=OPEN,
        playing_since__isnull=True,
        created_at__lt=cutoff,
    )
    tokens = list(waiting.filter(seats__human_token__gt="").values_list("seats__human_token"))
    ended = waiting.update(
        status=Match.Status.FAILED,
        error=f"no runner of people's games began it within {seconds} s "
        "(none serves the runner.people queue, or all its tables were taken)",
        lease_until=None,
    )
    for (token,) in tokens if ended else []:
        _take_person_away(token)  # a runner that takes it late plays it out at once
    return bool(ended)


def human_games_expire() -> int:
    """Periodic (with the reaper): :func:`human_game_expire` for every people's game."""
    waiting = Match.objects.filter(
        kind=Match.Kind.HUMAN, status__in=OPEN, playing_since__isnull=True
    ).values_list("pk", flat=True)
    return sum(human_game_expire(match_id=pk) for pk in list(waiting))
