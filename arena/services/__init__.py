"""The arena's workflows, by domain. Every write goes through here: keyword-only, typed,
atomic, and guarded by a status check so that running one twice is harmless (a redelivered
task finds the work done and stops).

- :mod:`.accounts`: users, API tokens, password resets;
- :mod:`.bots`: bots and their versions (upload, settlement of a validation);
- :mod:`.matches`: create, claim, finish, fail, requeue; the reaper;
- :mod:`.ratings`: live Elo and the ladder's refit;
- :mod:`.ladders`: entries and the tables queued;
- :mod:`.tournaments`, :mod:`.comparisons`, :mod:`.people`: what drives matches of those kinds;
- :mod:`.dispatch`: the runner tier's side (claim, send the job, store the result once), and
  the same job played here (``match_run``, ``version_validate``);
- :mod:`.messages`: tasks sent to the workers once a transaction commits.

Each module imports only those before it in that chain (messages, accounts, ratings, matches,
ladders, bots, tournaments, comparisons, people, dispatch): dispatch calls the others, never
the reverse. Callers use this package's names (``services.match_create``).
"""

from __future__ import annotations

from arena.services import comparisons, people, tournaments  # (used by their module names)
from arena.services.accounts import (
    RESET_MAIL,
    RESET_SUBJECT,
    password_reset_confirm,
    password_reset_request,
    password_reset_send,
    token_create,
    token_renew,
    token_revoke,
    token_used,
    tokens_end_session,
    tokens_revoke,
    user_create,
    user_email_set,
    user_language_set,
)
from arena.services.bots import (
    DEFAULT_LADDER,
    VALIDATED,
    VALIDATION_HANDS,
    VALIDATORS,
    bot_create,
    bot_retire,
    bot_update,
    version_activate,
    version_bench_check,
    version_settle,
    version_trial_end,
    version_upload,
)
from arena.services.dispatch import (
    CLOCK,
    VALIDATION_TIMEOUT,
    job_started,
    job_store,
    match_dispatch,
    match_run,
    matches_resend,
    new_claim,
    version_dispatch,
    version_validate,
    versions_expire,
)
from arena.services.ladders import (
    ladder_add_builtins,
    ladder_enter,
    ladder_fill,
    ladder_join,
)
from arena.services.matches import (
    CHALLENGE_MAX_HANDS,
    HUMAN_LEASE_SECONDS,
    LEASE_SECONDS,
    MAX_ATTEMPTS,
    MAX_CARD_POINTS,
    MAX_TARGET,
    RESEND_SECONDS,
    TOURNAMENT_MAX_HANDS,
    ScoresDisagree,
    SeatSpec,
    challenge_create,
    human_game_create,
    lease_seconds,
    match_attempt_failed,
    match_claim,
    match_create,
    match_fail,
    match_finish,
    match_requeue,
    matches_reap,
    new_seed,
    result_scores,
    rules_within_bounds,
)
from arena.services.messages import (
    enqueue,
    send,
)
from arena.services.ratings import (
    RATINGS_DEBOUNCE_SECONDS,
    ladder_log,
    live_elo_apply,
    ratings_recompute,
    ratings_schedule,
)

__all__ = [
    "CHALLENGE_MAX_HANDS",
    "CLOCK",
    "DEFAULT_LADDER",
    "HUMAN_LEASE_SECONDS",
    "LEASE_SECONDS",
    "MAX_ATTEMPTS",
    "MAX_CARD_POINTS",
    "MAX_TARGET",
    "RATINGS_DEBOUNCE_SECONDS",
    "RESEND_SECONDS",
    "RESET_MAIL",
    "RESET_SUBJECT",
    "ScoresDisagree",
    "SeatSpec",
    "TOURNAMENT_MAX_HANDS",
    "VALIDATED",
    "VALIDATION_HANDS",
    "VALIDATION_TIMEOUT",
    "VALIDATORS",
    "bot_create",
    "bot_retire",
    "bot_update",
    "challenge_create",
    "comparisons",
    "enqueue",
    "human_game_create",
    "job_started",
    "job_store",
    "ladder_add_builtins",
    "ladder_enter",
    "ladder_fill",
    "ladder_join",
    "ladder_log",
    "lease_seconds",
    "live_elo_apply",
    "match_attempt_failed",
    "match_claim",
    "match_create",
    "match_dispatch",
    "match_fail",
    "match_finish",
    "match_requeue",
    "match_run",
    "matches_reap",
    "matches_resend",
    "new_claim",
    "new_seed",
    "password_reset_confirm",
    "password_reset_request",
    "password_reset_send",
    "people",
    "ratings_recompute",
    "ratings_schedule",
    "result_scores",
    "rules_within_bounds",
    "send",
    "token_create",
    "token_renew",
    "token_revoke",
    "token_used",
    "tokens_end_session",
    "tokens_revoke",
    "tournaments",
    "user_create",
    "user_email_set",
    "user_language_set",
    "version_dispatch",
    "version_activate",
    "version_bench_check",
    "version_settle",
    "version_trial_end",
    "version_upload",
    "version_validate",
    "versions_expire",
]
