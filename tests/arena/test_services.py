"""The arena's workflows on a real database, with real matches (built-ins in-process, uploaded
bots sandboxed where the host can)."""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone, translation

from arena import selectors, services
from arena.models import Bot, BotVersion, Ladder, LadderEntry, Match, MatchSeat, Rating
from arena.services import dispatch as jobs
from arena.uploads import UploadError
from bots_sdk.builtin import BUILTIN
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from engine.record import verify

pytestmark = pytest.mark.django_db

GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)
CRASHING = (
    b"from bots_sdk import Bot\n\n\nclass Bad(Bot):\n"
    b"    def pass_cards(self, view):\n        raise ValueError('oops')\n\n"
    b"    def play(self, view):\n        return view.legal[0]\n"
)


@pytest.fixture(autouse=True)
def sandbox_or_unsafe(settings) -> None:  # type: ignore[no-untyped-def]
    try:
        default_launcher()
    except SandboxUnavailable:
        settings.BIDEL_UNSAFE_NO_SANDBOX = True  # a development machine without a sandbox


@pytest.fixture
def owner():  # type: ignore[no-untyped-def]
    return services.user_create(username="ada", password="a long passphrase")


def test_standard_ladder_exists_after_migrate() -> None:
    ladder = Ladder.objects.get(name="standard")
    assert (ladder.rules, ladder.table_size, ladder.active) == ("standard", 4, True)
    assert sorted(ladder.entries.values_list("builtin", flat=True)) == [
        "heuristic",
        "low",
        "montecarlo",
        "random",
        "strong",  # the top reference, and its strength levels below it
        "strong-1",
        "strong-2",
        "strong-3",
    ]


def test_bots_and_versions(owner) -> None:  # type: ignore[no-untyped-def]
    bot = services.bot_create(owner=owner, name="ada-bot")
    with pytest.raises(ValidationError, match="a bot of that name exists"):
        services.bot_create(owner=owner, name="ADA-BOT")
    with pytest.raises(ValidationError, match="built-in"):
        services.bot_create(owner=owner, name="heuristic")
    first = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    second = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    assert (first.number, second.number, first.status) == (1, 2, "pending")
    assert len(first.sha256) == 64
    with pytest.raises(UploadError):
        services.version_upload(bot=bot, user=owner, filename="bot.py", data=b"def (")
    other = services.user_create(username="eve", password="another passphrase")
    with pytest.raises(PermissionError):
        services.version_upload(bot=bot, user=other, filename="bot.py", data=GOOD)
    assert bot.versions.count() == 2  # nothing stored for the refused uploads


def test_only_the_owner_enters_a_bot_in_a_ladder_once(owner) -> None:  # type: ignore[no-untyped-def]
    bot = services.bot_create(owner=owner, name="ada-bot", join_ladders=[])
    ladder = Ladder.objects.get(name="standard")
    other = services.user_create(username="eve", password="another passphrase")
    with pytest.raises(PermissionError, match="only the bot's owner enters it in a ladder"):
        services.ladder_enter(ladder=ladder, bot=bot, user=other)
    assert not LadderEntry.objects.filter(bot=bot).exists()
    entry, created = services.ladder_enter(ladder=ladder, bot=bot, user=owner)
    assert created and services.ladder_enter(ladder=ladder, bot=bot, user=owner) == (entry, False)


def test_a_token_is_made_per_log_in_and_renewed_once(owner) -> None:  # type: ignore[no-untyped-def]
    token, key = services.token_create(user=owner, name="laptop")
    other, other_key = services.token_create(user=owner, name="ci")
    assert key != other_key and token.digest != other.digest  # one each, both live
    assert selectors.api_token_by_key(key) == token and selectors.api_token_by_key("x") is None
    fresh, fresh_key = services.token_renew(token=token)
    assert fresh.name == "laptop" and fresh_key != key
    assert fresh.expires == token.expires  # a new key, never a longer life
    token.refresh_from_db()
    assert token.revoked is not None and token.revoked_why == "renewed"
    with translation.override("en"), pytest.raises(ValidationError, match="revoked already"):
        services.token_renew(token=token)
    assert set(selectors.api_tokens_of(owner)) == {fresh, other}


def test_validation_activates_good_code_and_rejects_bad(owner) -> None:  # type: ignore[no-untyped-def]
    bot = services.bot_create(owner=owner, name="ada-bot")
    v1 = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    assert services.version_validate(version_id=v1.pk).status == BotVersion.Status.ACTIVE
    v2 = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    services.version_validate(version_id=v2.pk)
    v1.refresh_from_db()
    assert v1.status == BotVersion.Status.RETIRED  # the new version replaces it
    bad = services.version_upload(bot=bot, user=owner, filename="bot.py", data=CRASHING)
    rejected = services.version_validate(version_id=bad.pk)
    assert rejected.status == BotVersion.Status.REJECTED
    assert "crash: ValueError: oops" in rejected.validation_log
    assert (
        services.version_validate(version_id=bad.pk).status == BotVersion.Status.REJECTED
    )  # redelivered: no-op
    v2.refresh_from_db()
    assert v2.status == BotVersion.Status.ACTIVE


def _builtin_seats(names: list[str]) -> list[services.SeatSpec]:
    return [services.SeatSpec(builtin=n) for n in names]


def test_a_match_runs_once_and_its_record_verifies() -> None:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=_builtin_seats(["low", "random", "heuristic", "low"]),
        hands=2,
        seed=5,
    )
    assert match.status == Match.Status.QUEUED and match.engine_version
    finished = services.match_run(match_id=match.pk)
    assert (
        finished is not None and finished.status == Match.Status.FINISHED and finished.attempts == 1
    )
    assert services.match_run(match_id=match.pk) is None  # a redelivered task changes nothing
    assert verify(finished.record)["valid"]
    seats = list(finished.seats.order_by("seat"))
    assert sorted(s.rank for s in seats)[0] == 0 and all(s.score is not None for s in seats)
    # A stale attempt can never overwrite the result.
    assert services.match_finish(match_id=match.pk, attempt=1, result={}) is False


def test_claims_leases_and_attempts() -> None:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=_builtin_seats(["low"] * 4), hands=1, seed=1
    )
    first = services.match_claim(match_id=match.pk, claim="first")
    assert first is not None
    assert services.match_claim(match_id=match.pk) is None  # held by the first worker
    expire = {"lease_until": timezone.now() - timezone.timedelta(seconds=1)}
    Match.objects.filter(pk=match.pk).update(**expire)
    # No runner began it yet: not lost, only waiting (its job is sent again, same claim).
    assert services.matches_reap() == 0
    Match.objects.filter(pk=match.pk).update(
        started_at=timezone.now() - timezone.timedelta(seconds=services.RESEND_SECONDS + 1)
    )
    assert jobs.matches_resend() == 1 and jobs.matches_resend() == 0  # once per wait
    assert Match.objects.get(pk=match.pk).claim_token == "first"
    assert jobs.job_started(kind="match", ref=match.pk, claim="first")
    assert not jobs.job_started(kind="match", ref=match.pk, claim="forged")
    Match.objects.filter(pk=match.pk).update(**expire)
    assert services.matches_reap() == 1  # begun, then lost: back in the queue
    again = services.match_claim(match_id=match.pk)
    assert again is not None and again.attempts == 2
    services.match_attempt_failed(match_id=match.pk, attempt=2, error="platform down")
    services.match_claim(match_id=match.pk)
    services.match_attempt_failed(match_id=match.pk, attempt=3, error="platform down")
    match.refresh_from_db()
    assert (
        match.status == Match.Status.FAILED
        and match.attempts == 3
        and "platform down" in match.error
    )
    assert services.match_claim(match_id=match.pk) is None


def test_ladder_matches_feed_live_elo_once_and_ratings_reproducibly() -> None:
    ladder = Ladder.objects.get(name="standard")
    ladder.hands = 2
    ladder.concurrency = 3
    ladder.save()
    created = services.ladder_fill(ladder=ladder, rng=random.Random(1))
    assert (
        len(created) == 3 and services.ladder_fill(ladder=ladder) == []
    )  # at the concurrency limit
    for match in created:
        assert match.seats.count() == 4
        services.match_run(match_id=match.pk)
    entries = {e.pk: e.live_elo for e in LadderEntry.objects.filter(ladder=ladder)}
    assert any(v != 1500.0 for v in entries.values())
    assert services.live_elo_apply(match=Match.objects.get(pk=created[0].pk)) is False  # once only
    first = {
        r.entry_id: (r.rating, r.low, r.high) for r in services.ratings_recompute(ladder=ladder)
    }
    again = {
        r.entry_id: (r.rating, r.low, r.high) for r in services.ratings_recompute(ladder=ladder)
    }
    sat = {s.entry_id for s in MatchSeat.objects.filter(match__ladder=ladder)}  # 3 tables of 4
    assert first == again and set(first) == sat and len(sat) >= 4
    assert Rating.objects.filter(entry__ladder=ladder).count() == len(sat)
    builtins = [r for r in Rating.objects.filter(entry__ladder=ladder)]
    mean = sum(r.rating for r in builtins) / len(builtins)
    assert abs(mean - 1500) < 1e-6  # anchored to the built-ins


def test_uploaded_bots_play_ladder_matches(owner) -> None:  # type: ignore[no-untyped-def]
    ladder = Ladder.objects.get(name="standard")
    ladder.hands = 1
    ladder.concurrency = 1
    ladder.save()
    bot = services.bot_create(owner=owner, name="ada-bot")
    services.version_validate(
        version_id=services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD).pk
    )
    assert LadderEntry.objects.filter(ladder=ladder, bot=bot).exists()  # joined by itself
    Bot.objects.filter(pk=bot.pk)  # still enabled
    for _ in range(5):
        for match in services.ladder_fill(ladder=ladder, rng=random.Random(_)):
            services.match_run(match_id=match.pk)
    played = Match.objects.filter(
        ladder=ladder, seats__version__bot=bot, status=Match.Status.FINISHED
    )
    assert played.exists()  # the least-played entry gets a seat


def test_recompute_ratings_command_reproduces_the_stored_numbers() -> None:
    from io import StringIO

    from django.core.management import call_command

    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 1, 2
    ladder.save()
    for match in services.ladder_fill(ladder=ladder, rng=random.Random(3)):
        services.match_run(match_id=match.pk)
    services.ratings_recompute(ladder=ladder)
    out = StringIO()
    call_command("recompute_ratings", "--check", stdout=out)
    rated = Rating.objects.filter(entry__ladder=ladder).count()
    assert f"standard: {rated} ratings (0 bot versions), identical to the stored ones" in (
        out.getvalue()
    )
    assert ", 0 differing" in out.getvalue()  # every record replays to its stored scores
    Rating.objects.filter(entry__ladder=ladder).update(rating=1.0)  # tampered
    with pytest.raises(Exception, match="differ from their match log"):
        call_command("recompute_ratings", "--check", stdout=StringIO())
    services.ratings_recompute(ladder=ladder)
    seat = MatchSeat.objects.filter(match__ladder=ladder).first()
    MatchSeat.objects.filter(pk=seat.pk).update(hand_scores=[99])  # a seat's scores tampered
    out = StringIO()
    with pytest.raises(Exception, match="differ from their match log"):
        call_command("recompute_ratings", "--check", stdout=out)
    assert f"match {seat.match_id}: stored scores" in out.getvalue()


def test_admin_requeue_and_ratings_debounce(settings) -> None:  # type: ignore[no-untyped-def]
    from django.core.cache import cache

    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=_builtin_seats(["low"] * 4), hands=1, seed=2
    )
    services.match_claim(match_id=match.pk)
    services.match_attempt_failed(match_id=match.pk, attempt=1, error="x")
    assert services.match_requeue(match_id=match.pk)
    match.refresh_from_db()
    assert (match.status, match.attempts) == ("queued", 0)
    cache.delete("bidel:ratings:1")
    assert services.ratings_schedule(ladder_id=1) is True
    assert services.ratings_schedule(ladder_id=1) is False  # within the debounce window


def test_every_ladder_gets_the_builtins_as_reference_points() -> None:
    ladder = Ladder.objects.create(name="persian", rules="persian")
    assert services.ladder_add_builtins(ladder=ladder) == len(BUILTIN) == 8
    assert services.ladder_add_builtins(ladder=ladder) == 0
    assert ladder.entries.count() == 8


def _numpy_bot_zip() -> bytes:
    """A zip bot that imports numpy and loads weights saved beside it."""
    import io
    import zipfile

    import numpy

    weights = io.BytesIO()
    numpy.savez(weights, rank=numpy.arange(13, dtype=numpy.float64))
    code = (
        "from pathlib import Path\n\nimport numpy\n\nfrom bots_sdk import Bot\n\n"
        "WEIGHTS = numpy.load(Path(__file__).with_name('weights.npz'))['rank']\n\n\n"
        "class Numeric(Bot):\n"
        "    def score(self, card):\n"
        "        return WEIGHTS['23456789TJQKA'.index(card[0])]\n\n"
        "    def pass_cards(self, view):\n"
        "        order = numpy.argsort([-self.score(c) for c in view.hand])\n"
        "        return [view.hand[i] for i in order[: view.rules.pass_count]]\n\n"
        "    def play(self, view):\n"
        "        return view.legal[int(numpy.argmin([self.score(c) for c in view.legal]))]\n"
    )
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("bot.py", code)
        out.writestr("weights.npz", weights.getvalue())
    return archive.getvalue()


def test_a_bot_importing_numpy_validates_and_plays(owner) -> None:  # type: ignore[no-untyped-def]
    bot = services.bot_create(owner=owner, name="numeric")
    version = services.version_upload(
        bot=bot, user=owner, filename="numeric.zip", data=_numpy_bot_zip()
    )
    validated = services.version_validate(version_id=version.pk)
    assert validated.status == BotVersion.Status.ACTIVE, validated.validation_log
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(version=validated), *_builtin_seats(["low", "random", "low"])],
        hands=2,
        seed=11,
    )
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    seat = finished.seats.get(seat=0)
    assert seat.faults == [] and seat.score is not None, (seat.faults, seat.stderr)
    assert verify(finished.record)["valid"]


def test_the_trained_example_uploads_validates_and_plays(owner) -> None:  # type: ignore[no-untyped-def]
    import io
    import zipfile

    from tests.support import PROJECT_DIR

    example = PROJECT_DIR / "examples" / "learned"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:  # as its README says: both files at the root
        for name in ("bot.py", "weights.npz"):
            out.write(example / name, name)
    bot = services.bot_create(owner=owner, name="learned")
    version = services.version_upload(
        bot=bot, user=owner, filename="learned.zip", data=archive.getvalue()
    )
    validated = services.version_validate(version_id=version.pk)
    assert validated.status == BotVersion.Status.ACTIVE, validated.validation_log
    assert "entered the ladder(s): standard" in validated.validation_log
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(version=validated), *_builtin_seats(["random"] * 3)],
        hands=4,
        seed=3,
    )
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    seat = finished.seats.get(seat=0)
    assert seat.faults == [], (seat.faults, seat.stderr)
    assert verify(finished.record)["valid"]
