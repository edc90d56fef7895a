"""The arena's tables. Writes go through ``arena.services``; these classes hold data only."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext

from arena.domain import formats


def standard_rules() -> str:
    """The default rules spec (a callable: JSON defaults must not be shared objects)."""
    return "standard"


class Bot(models.Model):
    """A bot: a name, an owner and a history of uploaded versions."""

    #: What a bot's name is made of (a name is given at creation and never changes).
    NAME_PATTERN = r"[A-Za-z0-9_.-]{1,64}"

    #: The account that uploads its versions and sees its logs.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    #: Unique across the platform (built-in names are reserved).
    name = models.CharField(max_length=64, unique=True)
    #: Free text shown on the bot's page.
    description = models.TextField(blank=True, default="")
    #: Staff can disable a bot: it leaves matchmaking.
    disabled = models.BooleanField(default=False)
    #: What the platform last did to its versions by itself, for its owner (a version
    #: benched, a candidate not activated); "" when nothing.
    notice = models.TextField(blank=True, default="")
    #: When it was created.
    created_at = models.DateTimeField(auto_now_add=True)
    #: When its owner retired it (its active version too: it plays no more); null while in use.
    retired_at = models.DateTimeField(null=True, blank=True)
    #: The ladders it enters by itself when its first version becomes active (chosen at
    #: creation, ``standard`` unless told otherwise; none: it enters only where asked).
    join_ladders = models.ManyToManyField("Ladder", blank=True, related_name="joining_bots")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class BotVersion(models.Model):
    """One uploaded version of a bot's code, validated before it plays."""

    class Status(models.TextChoices):
        #: Uploaded, waiting for its validation match.
        PENDING = "pending", _("pending")
        #: Its validation match is running.
        VALIDATING = "validating", _("validating")
        #: Passed validation: the bot's current version in matchmaking.
        ACTIVE = "active", _("active")
        #: Failed validation; the log says why.
        REJECTED = "rejected", _("rejected")
        #: Validated and not playing: replaced by another, or never made active (its owner
        #: asked so, or its trial found it weaker); its owner may activate it.
        RETIRED = "retired", _("retired")
        #: Validated, on trial: it plays its comparison with the active version, which it
        #: replaces only if it is not found weaker and faults in none of its hands.
        CANDIDATE = "candidate", _("candidate")
        #: Taken out of play by the platform: its seats faulted in too many of its recent
        #: ladder matches (the version before it was restored); its owner may activate it.
        BENCHED = "benched", _("benched")

    class Activation(models.TextChoices):
        #: It replaces the active version as soon as it is validated.
        NOW = "now", _("as soon as it is validated")
        #: It plays a comparison with the active version first, and replaces it only if the
        #: comparison does not find it weaker and it faulted in none of its hands.
        IF_NOT_WEAKER = "if-not-weaker", _("if its comparison does not find it weaker")
        #: Validated only: its owner activates it.
        NEVER = "never", _("only when its owner activates it")

    #: The bot it belongs to.
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    #: 1, 2, 3 … per bot.
    number = models.PositiveIntegerField()
    #: ``.py`` or ``.zip``, as uploaded.
    filename = models.CharField(max_length=128)
    #: The uploaded bytes.
    code = models.BinaryField()
    #: SHA-256 of ``code``, hex.
    sha256 = models.CharField(max_length=64)
    #: See :class:`Status`.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    #: What validation found (shown to the owner only).
    validation_log = models.TextField(blank=True, default="")
    #: When it was uploaded.
    created_at = models.DateTimeField(auto_now_add=True)
    #: The validation's claim token: a runner's result is stored only under it.
    claim_token = models.CharField(max_length=64, blank=True, default="")
    #: When its validation was sent to the runners (it expires after a while unanswered).
    claimed_at = models.DateTimeField(null=True, blank=True)
    #: What its validation leads to (see :class:`Activation`), as its owner chose at upload.
    activation = models.CharField(max_length=16, choices=Activation.choices, default=Activation.NOW)
    #: When it last became active; null while it never was.
    activated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["bot_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="unique_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"


class Ladder(models.Model):
    """A standing competition: rules, table size, and how matches are made."""

    #: Unique name, e.g. ``standard``.
    name = models.CharField(max_length=64, unique=True)
    #: The rules spec (a preset name or ``{"preset": ..., setting: value}``).
    rules = models.JSONField(default=standard_rules)
    #: Seats per match.
    table_size = models.PositiveSmallIntegerField(default=4)
    #: Hands per match; null plays a game to the target score.
    hands = models.PositiveIntegerField(null=True, blank=True)
    #: Matches of this ladder queued or running at once, at most.
    concurrency = models.PositiveIntegerField(default=4)
    #: Only active ladders get new matches.
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


def bot_or_builtin(bot_field: str, name: str) -> models.CheckConstraint:
    """Who sits at a table, as stored (the participant of :mod:`bots_sdk.referee.participants`): a
    built-in's name in ``builtin`` or a bot in ``bot_field`` (its bot or its version), exactly
    one of them. Ladder entries, tournament entries and match seats all hold it."""
    return models.CheckConstraint(
        condition=models.Q(**{f"{bot_field}__isnull": False}, builtin="")
        | models.Q(**{f"{bot_field}__isnull": True}) & ~models.Q(builtin=""),
        name=name,
    )


class LadderEntry(models.Model):
    """A participant of a ladder: a bot (playing its active version) or a built-in."""

    #: The ladder.
    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="entries")
    #: The bot, for an uploaded bot.
    bot = models.ForeignKey(
        Bot, null=True, blank=True, on_delete=models.CASCADE, related_name="entries"
    )
    #: The built-in (random, low, heuristic, montecarlo): a fixed reference point.
    builtin = models.CharField(max_length=32, blank=True, default="")
    #: The incremental multiplayer Elo, updated once per finished rated match.
    live_elo = models.FloatField(default=1500.0)
    #: When it joined.
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "bot"],
                name="unique_bot_entry",
                condition=models.Q(bot__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["ladder", "builtin"],
                name="unique_builtin_entry",
                condition=~models.Q(builtin=""),
            ),
            bot_or_builtin("bot", "entry_is_bot_or_builtin"),
        ]

    def __str__(self) -> str:
        return f"{self.label} in {self.ladder_id}"

    @property
    def label(self) -> str:
        """The name shown in tables: the bot's name or the built-in's."""
        return self.bot.name if self.bot else self.builtin


class Tournament(models.Model):
    """A fixed field of bots, a format, a start time, maybe a repeat schedule; one edition."""

    class Status(models.TextChoices):
        #: Waiting for ``starts_at`` (or a staff start).
        SCHEDULED = "scheduled", _("scheduled")
        #: Rounds are being played.
        RUNNING = "running", _("running")
        #: Every round played (or the test decided).
        FINISHED = "finished", _("finished")
        #: Stopped by staff: no new matches.
        CANCELLED = "cancelled", _("cancelled")
        #: A round could not be planned or advanced: ``verdict`` says why.
        FAILED = "failed", _("failed")

    #: Shown everywhere; editions of a repeating tournament share it.
    name = models.CharField(max_length=100)
    #: The rules spec; its player count is the table size.
    rules = models.JSONField(default=standard_rules)
    #: A registered format's name (:mod:`arena.domain.formats`).
    format = models.CharField(max_length=16, choices=formats.choices)
    #: Seats per table.
    table_size = models.PositiveSmallIntegerField(default=4)
    #: Games to the target per table (when ``hands_per_table`` is null).
    games_per_table = models.PositiveIntegerField(default=1)
    #: Hands per table instead of whole games.
    hands_per_table = models.PositiveIntegerField(null=True, blank=True)
    #: Replay every deal of a table with the seats rotated through all positions.
    duplicate = models.BooleanField(default=False)
    #: A ladder whose ratings the tournament's matches count for.
    ladder = models.ForeignKey(
        Ladder, null=True, blank=True, on_delete=models.SET_NULL, related_name="tournaments"
    )
    #: When it starts by itself; null: when staff start it.
    starts_at = models.DateTimeField(null=True, blank=True)
    #: A cron expression (``m h dom mon dow``, UTC): each run is a new edition.
    repeat = models.CharField(max_length=100, blank=True, default="")
    #: See :class:`Status`.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED)
    #: Swiss: rounds to play (null: from the field size). Set for every format at start.
    rounds = models.PositiveIntegerField(null=True, blank=True)
    #: The round being played (0 before the start).
    current_round = models.PositiveIntegerField(default=0)
    #: The round-robin plan (tables per round, by entry id), fixed at the start.
    plan = models.JSONField(default=list, blank=True)
    #: ``match_test``: elo0, elo1, alpha, beta, max_deals.
    params = models.JSONField(default=dict, blank=True)
    #: ``match_test``: ``H1`` (the second bot is stronger), ``H0``, or ``undecided``.
    verdict = models.CharField(max_length=16, blank=True, default="")
    #: How it ended, in words: the test's verdict explained, or why it was cancelled or failed.
    outcome = models.TextField(blank=True, default="")
    #: The edition this one repeats.
    edition_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="editions"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class TournamentEntry(models.Model):
    """A bot (or built-in) in a tournament; its version is frozen when the tournament starts."""

    #: The tournament.
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    #: The bot, for an uploaded bot.
    bot = models.ForeignKey(Bot, null=True, blank=True, on_delete=models.CASCADE)
    #: The built-in's name, for a built-in.
    builtin = models.CharField(max_length=32, blank=True, default="")
    #: The version that plays every match of the tournament (set at the start).
    version = models.ForeignKey(BotVersion, null=True, blank=True, on_delete=models.PROTECT)

    class Meta:
        ordering = ["id"]
        constraints = [bot_or_builtin("bot", "tournament_entry_is_bot_or_builtin")]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return self.bot.name if self.bot else self.builtin


class Match(models.Model):
    """One match: who sat where, how it went, its game record."""

    class Kind(models.TextChoices):
        #: Made by a ladder's matchmaking; rated.
        LADDER = "ladder", _("ladder")
        #: Requested by a user; never rated.
        CHALLENGE = "challenge", _("challenge")
        #: Part of a tournament.
        TOURNAMENT = "tournament", _("tournament")
        #: A new version's validation match.
        VALIDATION = "validation", _("validation")
        #: A person playing bots in the browser; never rated.
        HUMAN = "human", _("human")
        #: Two versions of a bot compared on duplicate deals; never rated.
        COMPARISON = "comparison", _("comparison")

    class Status(models.TextChoices):
        #: Waiting for a worker.
        QUEUED = "queued", _("queued")
        #: Claimed by a worker (until ``lease_until``).
        RUNNING = "running", _("running")
        #: Played; the record and seats are stored.
        FINISHED = "finished", _("finished")
        #: Could not be played for platform reasons after every attempt; never rated.
        FAILED = "failed", _("failed")

    #: See :class:`Kind`.
    kind = models.CharField(max_length=16, choices=Kind.choices)
    #: See :class:`Status`.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    #: The rules spec.
    rules = models.JSONField(default=standard_rules)
    #: The deal seed: the same seed replays the same deals.
    seed = models.BigIntegerField()
    #: Hands to play; null plays a game to the target.
    hands = models.PositiveIntegerField(null=True, blank=True)
    #: The engine's version that played it.
    engine_version = models.CharField(max_length=32, blank=True, default="")
    #: The ladder it counts for, if any.
    ladder = models.ForeignKey(
        Ladder, null=True, blank=True, on_delete=models.SET_NULL, related_name="matches"
    )
    #: The tournament it belongs to, with its round, table and seat rotation.
    tournament = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.CASCADE, related_name="matches"
    )
    round = models.PositiveIntegerField(null=True, blank=True)
    table = models.PositiveIntegerField(null=True, blank=True)
    rotation = models.PositiveSmallIntegerField(default=0)
    #: Who asked for it (challenges).
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    #: The version comparison it is a table of (with its ``round`` and ``rotation``).
    comparison = models.ForeignKey(
        "Comparison", null=True, blank=True, on_delete=models.CASCADE, related_name="matches"
    )
    #: How many times a worker has claimed it.
    attempts = models.PositiveIntegerField(default=0)
    #: A running match whose lease has passed is given to another worker.
    lease_until = models.DateTimeField(null=True, blank=True)
    #: The current claim's token: a runner's result is stored only under it.
    claim_token = models.CharField(max_length=64, blank=True, default="")
    #: When a runner began playing the current claim's job (its lease counts from then).
    playing_since = models.DateTimeField(null=True, blank=True)
    #: The game record (engine format, with per-seat extras).
    record = models.JSONField(null=True, blank=True)
    #: Why it failed, for the operators.
    error = models.TextField(blank=True, default="")
    #: Whether its result has been applied to ``live_elo`` (exactly once).
    live_elo_applied = models.BooleanField(default=False)
    #: Whether its result is in its ladder's fitted ratings (:class:`RatingFit`): set by the
    #: refit that takes it in, so the next one folds in only those still unset.
    rated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "lease_until"]),
            models.Index(fields=["ladder", "status"]),
            # The finished results a ladder's refit has yet to take in: a few, however many
            # are stored.
            models.Index(
                fields=["ladder"],
                condition=models.Q(status="finished", rated=False),
                name="match_ladder_unrated",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.kind}, {self.status})"


class MatchSeat(models.Model):
    """One seat of a match: who played it and how it finished."""

    #: The match.
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    #: 0..n-1, in play order.
    seat = models.PositiveSmallIntegerField()
    #: The ladder entry, for ladder matches.
    entry = models.ForeignKey(LadderEntry, null=True, blank=True, on_delete=models.SET_NULL)
    #: The bot version that played (uploaded bots), frozen at creation.
    version = models.ForeignKey(BotVersion, null=True, blank=True, on_delete=models.PROTECT)
    #: The built-in that played, if it was one.
    builtin = models.CharField(max_length=32, blank=True, default="")
    #: A person's seat (kind ``human``): the secret of the page that plays it.
    human_token = models.CharField(max_length=64, blank=True, default="", db_index=True)
    #: The signed-in user who played the person's seat (none for an anonymous visitor).
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="human_seats",
    )
    #: Final total (lower is better); null until finished.
    score = models.IntegerField(null=True, blank=True)
    #: Finishing place, 0 = first; ties share.
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    #: Faults recorded against the seat (class, detail, decision, hand, play).
    faults = models.JSONField(default=list)
    #: The bot's captured stderr (its owner only).
    stderr = models.TextField(blank=True, default="")
    #: What each hand added to this seat's total (from the record; voids left out).
    hand_scores = models.JSONField(default=list)
    #: The luck of the deal: what this seat's cards were worth, hand by hand, in expected
    #: points under the reference policy (:func:`bots_sdk.analysis.deal_luck`), as the runner
    #: valued them (null for a hand not valued); empty when the match was not valued.
    hand_expected = models.JSONField(default=list)
    #: The sum of ``hand_expected`` over the hands valued, beside ``score``: below it, the seat
    #: played better than its cards; null when not valued.
    expected = models.FloatField(null=True, blank=True)
    #: The tournament entry that played the seat, for tournament matches.
    tournament_entry = models.ForeignKey(
        TournamentEntry, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        ordering = ["match_id", "seat"]
        indexes = [
            # A bot's (through its versions) or a built-in's matches, newest first: the lists'
            # filters find them through these, however many matches are stored.
            models.Index(fields=["version", "-match"], name="seat_version_match"),
            models.Index(
                fields=["builtin", "-match"],
                condition=~models.Q(builtin=""),
                name="seat_builtin_match",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="unique_match_seat"),
            models.CheckConstraint(
                condition=models.Q(version__isnull=False, builtin="", human_token="")
                | models.Q(version__isnull=True) & ~models.Q(builtin="") & models.Q(human_token="")
                | models.Q(version__isnull=True, builtin="") & ~models.Q(human_token=""),
                name="seat_is_version_builtin_or_person",
            ),
        ]

    def __str__(self) -> str:
        return f"seat {self.seat} of match {self.match_id}"

    @property
    def label(self) -> str:
        """The name shown for the seat: its bot's, its built-in's, or for a person's seat the
        signed-in player's username ("a person" for a visitor, or an account since deleted)."""
        if self.version is not None:
            return self.version.bot.name
        if self.builtin:
            return self.builtin
        if self.person is not None:
            return self.person.get_username()
        return pgettext("who sat in a seat", "a person")


class Comparison(models.Model):
    """Is one version of a bot stronger than another? Both sit at the same tables with two
    built-ins, every deal played in every rotation (duplicate), round after round until the
    sequential test decides or the budget of deals is spent (:mod:`arena.services.comparisons`)."""

    class Status(models.TextChoices):
        #: Its rounds are being played.
        RUNNING = "running", _("running")
        #: Decided, or its budget spent: ``verdict`` says what it found.
        FINISHED = "finished", _("finished")
        #: A match of it could not be played: no verdict.
        FAILED = "failed", _("failed")
        #: Started by the platform, and another version became active before its verdict:
        #: the newer activation's comparison runs instead (one of the platform's per bot).
        SUPERSEDED = "superseded", _("superseded")

    #: The bot whose versions are compared.
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="comparisons")
    #: The version compared against (usually the one before).
    older = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="+")
    #: The version tested (usually the one just made active).
    newer = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="+")
    #: A candidate's trial (``--activate if-not-weaker``): its verdict decides whether
    #: ``newer`` replaces ``older``.
    trial = models.BooleanField(default=False)
    #: The owner who asked for it; null when the platform started it (a new active version).
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    #: See :class:`Status`.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    #: Round r deals from ``seed + r``.
    seed = models.BigIntegerField()
    #: Rounds started so far.
    rounds = models.PositiveIntegerField(default=0)
    #: The result so far (:func:`arena.services.comparisons.compare`): deals, mean, interval, test.
    result = models.JSONField(default=dict)
    #: What it found, in words.
    verdict = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"comparison {self.pk} of {self.bot_id} ({self.status})"


class Analysis(models.Model):
    """One seat of a finished match analysed decision by decision (:mod:`bots_sdk.analysis`)
    on the runners: asked for by a user, made once per match, seat, samples and method and
    kept (the next user to ask reads it)."""

    class Status(models.TextChoices):
        #: Sent to the runners; no report yet.
        QUEUED = "queued", _("queued")
        #: The report is stored.
        DONE = "done", _("done")
        #: No report: ``error`` says why (asking again tries again).
        FAILED = "failed", _("failed")

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="analyses")
    #: The seat analysed, from 0.
    seat = models.PositiveSmallIntegerField()
    #: Samples per decision.
    samples = models.PositiveIntegerField()
    #: The method (:data:`bots_sdk.analysis.METHOD`): a new one makes new reports.
    method = models.CharField(max_length=32)
    #: See :class:`Status`.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    #: Who asked first (their allowance paid for it).
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    #: The current claim's token: a runner's report is stored only under it.
    claim_token = models.CharField(max_length=64, blank=True, default="")
    #: The report (:meth:`bots_sdk.analysis.Report.to_dict`).
    report = models.JSONField(null=True, blank=True)
    #: Why there is no report.
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    #: When it was last sent to the runners (the reaper ends one no runner answered).
    sent_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["match", "seat", "samples", "method"], name="analysis_once"
            ),
        ]
        indexes = [models.Index(fields=["requested_by", "created_at"], name="analysis_by_user")]

    def __str__(self) -> str:
        return f"analysis of seat {self.seat} of match {self.match_id} ({self.status})"


class PlayHold(models.Model):
    """Something an open person's game holds while it is queued or running, one row each:
    one of the tables for people (``table:N``, N below ``HUMAN_GAMES_MAX_OPEN``) and its
    visitor (``user:ID``, ``address:…``; a browser is held by its seat cookie). The key is
    unique, so neither a visitor's second open game nor a table taken twice can be stored,
    even by two requests at once; the holds of a game that is over are released when the next
    game is made."""

    #: What is held: ``table:0``, ``user:12``, ``address:203.0.113.7``.
    key = models.CharField(max_length=200, unique=True)
    #: The open game that holds it.
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="holds")

    def __str__(self) -> str:
        return f"{self.key} held by match {self.match_id}"


class Rating(models.Model):
    """A ladder entry's rating as the rankings show it, derived from the ladder's whole match
    log: a built-in's own; a bot's, that of its active version once that has been fitted,
    else of its newest fitted version (``version`` says whose: see :class:`VersionRating`)."""

    #: The entry rated.
    entry = models.OneToOneField(LadderEntry, on_delete=models.CASCADE, related_name="rating")
    #: The bot version whose fit this is (null for a built-in).
    version = models.ForeignKey(
        "BotVersion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    #: Elo-scale Plackett–Luce rating.
    rating = models.FloatField()
    #: 95% interval.
    low = models.FloatField()
    high = models.FloatField()
    #: Rated matches behind it.
    matches = models.PositiveIntegerField()
    #: The number of finished rated matches of the ladder when fitted.
    fitted_on = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.rating:.0f} [{self.low:.0f}, {self.high:.0f}]"


class VersionRating(models.Model):
    """A bot version's fitted rating on a ladder: each version is its own participant of the
    fit, so its rating, interval and match count come from the matches it played alone."""

    #: The bot's entry in the ladder.
    entry = models.ForeignKey(LadderEntry, on_delete=models.CASCADE, related_name="version_ratings")
    #: The version rated.
    version = models.ForeignKey("BotVersion", on_delete=models.CASCADE, related_name="ratings")
    #: Elo-scale Plackett–Luce rating.
    rating = models.FloatField()
    #: 95% interval.
    low = models.FloatField()
    high = models.FloatField()
    #: Rated matches this version played.
    matches = models.PositiveIntegerField()
    #: The number of finished rated matches of the ladder when fitted.
    fitted_on = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "version"], name="unique_version_rating")
        ]

    def __str__(self) -> str:
        return f"v{self.version_id}: {self.rating:.0f} [{self.low:.0f}, {self.high:.0f}]"


class RatingFit(models.Model):
    """A ladder's fitted model as its last refit left it (:class:`arena.domain.ratings.Fit`),
    kept so that the next refit folds in the new results alone, or starts from it: every
    participant's strength, the Hessian there (dense, float64: kept only for ladders of up to
    :data:`arena.services.ratings.FOLD_MOST_ENTRIES` participants), their rated matches."""

    ladder = models.OneToOneField(Ladder, on_delete=models.CASCADE, related_name="fit")
    #: The participants in the arrays' order, each [name, entry id, version id or null] (its
    #: name as :func:`arena.domain.ratings.rated_as` gives it).
    names = models.JSONField(default=list)
    #: Strengths, little-endian float64; the Hessian, n × n of them (empty: not kept).
    theta = models.BinaryField(default=b"")
    hessian = models.BinaryField(default=b"")
    #: Rated matches per participant, little-endian int64.
    counts = models.BinaryField(default=b"")
    #: The rated matches in it, and the folds since it was last fitted from the whole history.
    tables = models.PositiveIntegerField(default=0)
    folds = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"fit of {self.ladder_id}: {len(self.names)} rated on {self.tables} matches"


class RatingPoint(models.Model):
    """A ladder entry's fitted rating after a refit in which it had played more matches: the
    rating history drawn on bot pages, a point per version fitted (so the chart shows where
    each version took over)."""

    #: The entry rated.
    entry = models.ForeignKey(LadderEntry, on_delete=models.CASCADE, related_name="history")
    #: The bot version fitted (null for a built-in, and for points from before versions were
    #: rated apart).
    version = models.ForeignKey(
        "BotVersion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    #: Elo-scale rating at that time.
    rating = models.FloatField()
    #: 95% interval at that time.
    low = models.FloatField()
    high = models.FloatField()
    #: Rated matches of the entry behind it.
    matches = models.PositiveIntegerField()
    #: When the refit ran.
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["entry_id", "at"]
        indexes = [models.Index(fields=["entry", "at"], name="ratingpoint_entry_at")]

    def __str__(self) -> str:
        return f"{self.rating:.0f} at {self.at:%Y-%m-%d %H:%M}"


class Profile(models.Model):
    """What a user chose for themselves: the language of the pages, remembered across
    devices (a visitor's choice lives in a cookie)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    #: A code of settings.LANGUAGES ("en", "fa"), or "" for the browser's choice.
    language = models.CharField(max_length=8, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.user} ({self.language or 'browser'})"


class ApiToken(models.Model):
    """An API token: what a program presents as ``Authorization: Token <key>``. The key is
    shown once, when it is made; only its SHA-256 is stored (``arena.tokens``), with its first
    characters to tell a user's tokens apart. It works until it expires or is revoked; the row
    stays a while after, so that a refused key is told which."""

    class Revoked(models.TextChoices):
        #: Its owner revoked it (the account page, ``DELETE /api/tokens/…``).
        OWNER = "owner", _("revoked by its owner")
        #: A renewal (``POST /api/token/renew/``) replaced it with a fresh token.
        RENEWED = "renewed", _("replaced by a renewal")
        #: The account's password was reset.
        PASSWORD_RESET = "password_reset", _("revoked by a password reset")
        #: Its owner made one token more than an account may hold, and it was the least
        #: recently used.
        LIMIT = "limit", _("revoked for a newer token")
        #: It was made by a web session (the account page), which ended: a log-out, from any
        #: door, ends what the session made.
        LOGOUT = "logout", _("ended with the session that made it")

    #: The account it signs in as.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    #: What it is for: the name its owner gave, or the client that asked for it.
    name = models.CharField(max_length=64)
    #: The key's first characters, in the clear: enough to tell tokens apart, not to use one.
    prefix = models.CharField(max_length=8)
    #: SHA-256 of the key, hex: what a presented key is looked up by.
    digest = models.CharField(max_length=64, unique=True)
    #: When it was made.
    created = models.DateTimeField(default=timezone.now)
    #: When it last signed a request in (to the minute); null before its first use.
    last_used = models.DateTimeField(null=True, blank=True)
    #: When it stops working: ``API_TOKEN_DAYS`` after the log-in with a password that made
    #: it; a web session's token no later than the session.
    expires = models.DateTimeField()
    #: The web session that made it (the account page), whose log-out revokes it; "" for a
    #: token made by a log-in with a password (``POST /api/token/``, ``bidel login``).
    session_key = models.CharField(max_length=40, blank=True, default="")
    #: When it was revoked; null while it may be used.
    revoked = models.DateTimeField(null=True, blank=True)
    #: Why it was revoked (see :class:`Revoked`); "" while it may be used.
    revoked_why = models.CharField(max_length=16, choices=Revoked.choices, blank=True, default="")

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["user", "revoked"], name="apitoken_user_revoked")]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name}) of {self.user}"
