"""Django settings for Bidel, read from environment variables with safe defaults.

Variables (all optional except SECRET_KEY when DEBUG is off):

- ``DEBUG``: off unless set to 1/true/yes/on.
- ``SECRET_KEY``: required when DEBUG is off; the process refuses to start without it.
- ``ALLOWED_HOSTS``: comma-separated; defaults to the loopback names.
- ``CSRF_TRUSTED_ORIGINS``: comma-separated origins (``https://bidel.example``).
- ``SITE_URL``: the site's address as people reach it (``https://bidel.example``): the links
  of the password-reset mails point there, whatever host a request names. Without it, with
  DEBUG the request's host is used (development), and with DEBUG off resets are refused.
- ``DATABASE_URL``: e.g. ``postgres://user@host:5432/db``; default: SQLite in var/.
- ``REDIS_URL``: when set, Celery's broker and result backend and the cache; else an embedded
  broker in var/ that needs no server (see hearts_runner/broker.py) and a file cache.
- ``BIDEL_VAR_DIR``: where the SQLite file, the embedded broker, results and cache live
  (default: ``var/`` in the project).
- ``CELERY_TASK_SOFT_TIME_LIMIT`` / ``CELERY_TASK_TIME_LIMIT``: seconds (defaults 900 / 960).
- ``HEALTH_CACHE_SECONDS``: the health report is made at most this often per web process
  (default 1; 0: at every request).
- ``API_TOKEN_DAYS``: days an API token works after it is made or renewed (default 90).
- ``EMAIL_BACKEND``: ``console`` (the default with DEBUG: mails are printed), ``smtp`` (the
  default without), ``filebased``, ``locmem``, ``dummy``, or a back end's dotted path.
- ``EMAIL_HOST``, ``EMAIL_PORT``, ``EMAIL_HOST_USER``, ``EMAIL_HOST_PASSWORD``,
  ``EMAIL_USE_TLS`` / ``EMAIL_USE_SSL``: the SMTP server (defaults localhost, 25, none, none,
  off / off).
- ``DEFAULT_FROM_EMAIL``: the sender of the password-reset mails.
- ``PASSWORD_RESET_RATE`` / ``PASSWORD_RESET_EMAIL_RATE``: reset requests per client address
  and reset mails per e-mail address (defaults 10/hour, 3/hour).
- ``UPLOAD_RATE`` / ``BOT_UPLOAD_RATE``: new versions uploaded per user and per bot
  (defaults 20/hour, 10/hour); ``UPLOAD_MAX_WAITING``: a user's versions waiting for their
  validation at once (default 3).
- ``ANALYSIS_RATE``: analyses of a match's seat one user may ask for (default 30/day; one
  another user asked for already is read for free); ``ANALYSIS_TIMEOUT_SECONDS``: how long one
  may wait for a runner before it fails (default 1800).
- ``REQUEST_BODY_MAX_BYTES`` / ``REQUEST_BODY_SECONDS``: the largest request body the server
  reads, and the time a client has to send it (defaults 1 MiB + 64 KiB, 60 s).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dj_database_url

from hearts_platform.env import Env, SettingsError
from hearts_runner.broker import embedded_transport, redis_transport
from hearts_runner.config import task_routes, unsafe_no_sandbox

BASE_DIR = Path(__file__).resolve().parent.parent
env = Env()

VAR_DIR = Path(env.str("BIDEL_VAR_DIR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DEBUG", False)
SECRET_KEY = env.str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise SettingsError(
            "SECRET_KEY is not set and DEBUG is off; set SECRET_KEY to a long random string "
            "(or DEBUG=1 for local development)"
        )
    SECRET_KEY = "django-insecure-bidel-local-development-only"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", [])
SITE_URL = env.origin("SITE_URL")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served by us: /api/docs/ works offline
    "django_filters",  # the API's list filters, documented in the schema
    "django_celery_beat",
    "channels",
    "arena",
]

MIDDLEWARE = [
    "hearts_platform.middleware.ServerTimingMiddleware",  # first: it times all the rest
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # the cookie's or the browser's language
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "hearts_platform.middleware.UserLanguageMiddleware",  # a signed-in user's own choice
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "hearts_platform.urls"
WSGI_APPLICATION = "hearts_platform.wsgi.application"
ASGI_APPLICATION = "hearts_platform.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------

_DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'bidel.sqlite3'}"
DATABASE_URL = env.str("DATABASE_URL", _DEFAULT_DATABASE_URL)
try:
    _database = dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
except (ValueError, KeyError) as exc:
    raise SettingsError(f"DATABASE_URL is not a usable database URL ({exc})") from None
if _database["ENGINE"] == "django.db.backends.sqlite3":
    _database["CONN_MAX_AGE"] = 0
    _database["OPTIONS"] = {
        # The web server and the workers write to the same file: take the write lock at the
        # start of a transaction (no deadlock on upgrade) and let readers go on beside it.
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not :memory:, so that worker processes started by tests see the test data.
    _database["TEST"] = {"NAME": str(VAR_DIR / "test_bidel.sqlite3")}
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: broker, results, cache ----------------------------------------------------------

REDIS_URL = env.str("REDIS_URL")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise SettingsError(f"REDIS_URL={REDIS_URL!r} must start with redis://, rediss:// or unix://")

CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", 900, minimum=1)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", 960, minimum=1)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise SettingsError(
        f"CELERY_TASK_TIME_LIMIT ({CELERY_TASK_TIME_LIMIT}) must exceed "
        f"CELERY_TASK_SOFT_TIME_LIMIT ({CELERY_TASK_SOFT_TIME_LIMIT})"
    )

if REDIS_URL:
    _transport = redis_transport(REDIS_URL, hard_time_limit=CELERY_TASK_TIME_LIMIT)
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "bidel",
        }
    }
else:
    _transport = embedded_transport(VAR_DIR)
    # Shared by every process on the machine (throttles, debouncing), unlike locmem.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# --- Channels (the live WebSockets: hearts_platform/asgi.py) ---------------------------------
# Spectators read the runners' live feed (hearts_runner/live.py: Redis, or files on the
# embedded default) through one follower per match per web process (arena/spectators.py); the
# channel layer carries messages between consumers: Redis when there is one, else in memory.
ASGI_APPLICATION = "hearts_platform.asgi.application"
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": "bidel:channels"},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Celery (read by hearts_platform/celery.py through the CELERY_ namespace) ---------------

CELERY_BROKER_URL = _transport["broker_url"]
CELERY_BROKER_TRANSPORT = _transport["broker_transport"]
CELERY_RESULT_BACKEND = _transport["result_backend"]
CELERY_BROKER_TRANSPORT_OPTIONS = _transport["broker_transport_options"]
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = _transport["result_backend_transport_options"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# JSON only: a task takes ids and seeds, never a pickled object.
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_ACCEPT_CONTENT = ["json"]
# Acknowledge after the task ran, one message at a time per worker process, so a worker that
# dies gives its task back instead of taking a batch down with it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# ...but a task that kills its worker every time is re-sent at most max_retries times, not
# forever (without this it looped ~25 times in 20 s when measured).
CELERY_TASK_RETRY_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TRACK_STARTED = True
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_SEND_TASK_EVENTS = True
CELERY_TASK_SEND_SENT_EVENT = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Periodic work, declared here once; django-celery-beat keeps it in the database.
CELERY_BEAT_SCHEDULE = {
    "fill ladders": {"task": "arena.ladders_fill", "schedule": 10.0},
    "reap lost matches": {
        "task": "arena.matches_reap",
        "schedule": float(env.int("REAP_SECONDS", 60, minimum=1)),
    },
    "start and advance tournaments": {
        "task": "arena.tournaments_tick",
        "schedule": float(env.int("TOURNAMENT_TICK_SECONDS", 5, minimum=1)),
    },
    # Finished matches' live feeds, when they are files (hearts_runner.live.FileFeed.sweep):
    # the runner sweeps as it opens each new feed, this when none is opened.
    "prune live feeds": {"task": "arena.live_feeds_sweep", "schedule": 60.0},
}
# The runner tier (hearts_runner, docs/operations.md): matches and validations go to the
# runners' queue as self-contained jobs, a person's game to the people's runners' queue; on one
# host a worker may serve several queues.
CELERY_TASK_ROUTES = task_routes()
CELERY_INCLUDE = ["hearts_runner.tasks"]
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True

# /api/health/ is made at most this often per web process, however many ask (it reads the
# workers' heartbeats: hearts_runner/heartbeat.py).
HEALTH_CACHE_SECONDS = float(env.int("HEALTH_CACHE_SECONDS", 1, minimum=0))

# Uploaded bots run in the sandbox (bots_sdk.sandbox; BIDEL_SANDBOX picks the backend). Only a
# development machine without one may turn it off, and then runs only its own bots.
BIDEL_UNSAFE_NO_SANDBOX = unsafe_no_sandbox()
# A running match whose worker is silent this long is given to another worker by the reaper.
MATCH_LEASE_SECONDS = env.int("MATCH_LEASE_SECONDS", 20 * 60, minimum=1)
# A queued match unclaimed this long has its message sent again (a broker may lose messages).
MATCH_RESEND_SECONDS = env.int("MATCH_RESEND_SECONDS", 120, minimum=1)
#: Seconds a validation may wait for a runner to play it before it is rejected as the
#: platform's doing (arena.services.dispatch.versions_expire).
VALIDATION_TIMEOUT_SECONDS = env.int("VALIDATION_TIMEOUT_SECONDS", 300, minimum=30)
#: Seconds an analysis may wait for a runner before it fails, saying so
#: (arena.services.dispatch.analyses_expire).
ANALYSIS_TIMEOUT_SECONDS = env.int("ANALYSIS_TIMEOUT_SECONDS", 1800, minimum=30)

# --- People at the table (/play/; docs/operations.md, "Limits on work") ----------------------
# People's games open at once (queued or running), every visitor's together: the slots of the
# people's runners (`python -m hearts_runner --people`, their --concurrency summed), never a
# bot match's; 0 closes /play/.
HUMAN_GAMES_MAX_OPEN = env.int("HUMAN_GAMES_MAX_OPEN", 4)
# A person's clock: seconds a move, and a bank for the game that a timeout spends whole.
HUMAN_MOVE_SECONDS = env.int("HUMAN_MOVE_SECONDS", 30, minimum=1)
HUMAN_BANK_SECONDS = env.int("HUMAN_BANK_SECONDS", 120)
# No page of the seat open this long: the person has left, the fallback plays the rest.
HUMAN_AWAY_SECONDS = env.int("HUMAN_AWAY_SECONDS", 60, minimum=1)
# A person's thinking time for the whole game; once spent, the fallback plays the rest.
HUMAN_GAME_SECONDS = env.int("HUMAN_GAME_SECONDS", 600, minimum=1)
# A person's game that no people's runner has begun this long after it was made ends, saying
# so (no runner serves the people's queue, or every one of its slots is taken).
HUMAN_START_SECONDS = env.int("HUMAN_START_SECONDS", 60, minimum=1)
# A coach at people's tables: with each question, the strong reference's answer, shown when
# the person asks for a hint (their games are practice: never rated). Costs the runner one
# strong decision a question.
HUMAN_COACH = env.bool("HUMAN_COACH", True)
# A person's game's lease and its runner's time limit: more than its person may take
# (HUMAN_GAME_SECONDS, HUMAN_AWAY_SECONDS) and its bots' play together (arena.services).
HUMAN_GAME_LEASE_SECONDS = env.int("HUMAN_GAME_LEASE_SECONDS", 3600, minimum=120)

# --- REST API -------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # ``?format=`` filters tournaments by format; responses are JSON (or the browsable API by
    # the Accept header), never chosen by a query parameter — but for the schema, whose view
    # reads ``?format=json`` / ``?format=yaml`` itself (hearts_platform.views.SchemaView).
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "arena.api.authentication.ApiTokenAuthentication",  # Token <key>, expiring, revocable
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PAGINATION_CLASS": "arena.api.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_RENDERER_CLASSES": [
        "arena.api.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "EXCEPTION_HANDLER": "arena.api.views.api_exception_handler",
    # One parser policy (arena/api/parsers.py): a bad body is a 4xx in the API's error shape.
    "DEFAULT_PARSER_CLASSES": [
        "arena.api.parsers.JSONParser",
        "arena.api.parsers.FormParser",
        "arena.api.parsers.MultiPartParser",
    ],
    # Per user (challenges, token) or per address (signup, login); the forms count in the same
    # buckets as the API (arena/web.py).
    "DEFAULT_THROTTLE_RATES": {
        "challenges": env.rate("CHALLENGE_RATE", "30/hour"),
        # Games a person starts against bots (anonymous visitors too: counted per address).
        "human_games": env.rate("HUMAN_GAME_RATE", "30/hour"),
        "signup": "20/hour",
        "login": "30/minute",
        "token": "20/hour",
        # New versions, per user and per bot: each is checked, then built (up to 120 s of CPU)
        # and played in a validation match.
        "uploads": env.rate("UPLOAD_RATE", "20/hour"),
        # Version comparisons an owner asks for (arena.services.comparisons: up to 48 matches each).
        "comparisons": env.rate("COMPARISON_RATE", "10/day"),
        # Analyses of a match's seat a user asks for (each a few seconds to minutes of a
        # runner's CPU); reading one that exists is free.
        "analyses": env.rate("ANALYSIS_RATE", "30/day"),
        "bot_uploads": env.rate("BOT_UPLOAD_RATE", "10/hour"),
        # Failed tries, apart from those: versions rejected by their validation and uploads
        # refused for what they hold, per user.
        "refused_uploads": env.rate("REFUSED_UPLOAD_RATE", "20/hour"),
        # Listing and revoking one's API tokens (per user).
        "tokens": "60/minute",
        # Password resets asked for, per client address and per e-mail address asked about
        # (arena.api.throttles: counted whether or not an account has it).
        "password_reset": env.rate("PASSWORD_RESET_RATE", "10/hour"),
        "password_reset_email": env.rate("PASSWORD_RESET_EMAIL_RATE", "3/hour"),
    },
    # uvicorn faces the clients: the address is REMOTE_ADDR; a client's X-Forwarded-For would
    # otherwise give it a fresh throttle bucket per request.
    "NUM_PROXIES": 0,
}
#: Challenges one user may have queued or running at once.
CHALLENGE_MAX_OPEN = 3
#: Version comparisons one owner may have asked for and still running at once.
COMPARISONS_MAX_OPEN = env.int("COMPARISONS_MAX_OPEN", 1, minimum=1)
#: A comparison's round: deals (each in every rotation), and its budget of rounds.
COMPARISON_DEALS_PER_ROUND = env.int("COMPARISON_DEALS_PER_ROUND", 20, minimum=1)
COMPARISON_MAX_ROUNDS = env.int("COMPARISON_MAX_ROUNDS", 12, minimum=1)
#: An active version is benched when its seats faulted in at least BENCH_MIN_FAULTED of its
#: last BENCH_WINDOW ladder matches, and in more than BENCH_FAULT_SHARE of them.
BENCH_WINDOW = env.int("BENCH_WINDOW", 10, minimum=1)
BENCH_MIN_FAULTED = env.int("BENCH_MIN_FAULTED", 3, minimum=1)
BENCH_FAULT_SHARE = 0.3
#: Versions of one user's bots waiting for their validation (pending or validating) at once.
UPLOAD_MAX_WAITING = env.int("UPLOAD_MAX_WAITING", 3, minimum=1)
#: The largest request body the server reads (hearts_platform/body_limit.py, before Django
#: does): an upload at arena.uploads' limit (1 MiB) and its multipart slack (64 KiB).
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", 1024 * 1024 + 64 * 1024, minimum=1)
#: Seconds a client has to send its whole request body (a slow one holds a connection).
REQUEST_BODY_SECONDS = env.int("REQUEST_BODY_SECONDS", 60, minimum=1)
#: The largest WebSocket message the server takes from a client (uvicorn's --ws-max-size on
#: every command line that starts it: Dockerfile, docker-compose.yml, manage.py demo); past it
#: the connection closes (1009). A seat's answer is at most 2,000 characters.
WS_MESSAGE_MAX_BYTES = 64 * 1024
#: Failed log-ins of one username from one address before both doors refuse it for the rest
#: of the window (seconds from the first failure): arena/logins.py.
LOGIN_MAX_FAILURES = 5
LOGIN_FAILURE_WINDOW = 15 * 60

# --- Accounts: API tokens, password resets by e-mail -----------------------------------------

#: Days an API token works after it is made (``POST /api/token/``) or renewed
#: (``POST /api/token/renew/``); then it is refused, saying so.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", 90, minimum=1)
#: Working API tokens one account may hold: making one more revokes the least recently used.
API_TOKENS_PER_USER = 20
#: Seconds a password-reset link works (Django's setting; a link works once in any case).
PASSWORD_RESET_TIMEOUT = 24 * 3600

_EMAIL_BACKENDS = {
    name: f"django.core.mail.backends.{name}.EmailBackend"
    for name in ("smtp", "console", "locmem", "filebased", "dummy")
}
# The demo (DEBUG) prints each mail on the web server's console; production sends by SMTP.
EMAIL_BACKEND = env.str("EMAIL_BACKEND", "console" if DEBUG else "smtp")
EMAIL_BACKEND = _EMAIL_BACKENDS.get(EMAIL_BACKEND, EMAIL_BACKEND)


def _module_exists(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except ImportError:  # a parent package missing
        return False


if "." not in EMAIL_BACKEND or not _module_exists(EMAIL_BACKEND.rpartition(".")[0]):
    # Else every reset mail would be lost to an import error, logged one at a time.
    raise SettingsError(
        f"EMAIL_BACKEND={EMAIL_BACKEND!r} is neither one of "
        + ", ".join(sorted(_EMAIL_BACKENDS))
        + " nor the dotted path of an installed mail back end"
    )
EMAIL_HOST = env.str("EMAIL_HOST", "localhost")
EMAIL_PORT = env.int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", False)  # STARTTLS (port 587)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", False)  # TLS from the first byte (port 465)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    # Django would refuse it only when the first mail is sent, and lose that mail.
    raise SettingsError("EMAIL_USE_TLS and EMAIL_USE_SSL exclude each other: set one")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", "Bidel <bidel@localhost>")
# A mail server that stalls must not hold a web worker for long: the reset mail is sent while
# answering (so the tests, and Django's own views, see it sent).
EMAIL_TIMEOUT = 10
# The file backend's folder (EMAIL_BACKEND=filebased).
EMAIL_FILE_PATH = VAR_DIR / "mail"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SPECTACULAR_SETTINGS = {
    "ENUM_NAME_OVERRIDES": {
        "VersionStatusEnum": "arena.models.BotVersion.Status",
        "MatchStatusEnum": "arena.models.Match.Status",
    },
    "TITLE": "Bidel API",
    "DESCRIPTION": "Hearts bot arena: bots, matches, ladders and tournaments.",
    "VERSION": "0.1.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Internationalisation, static files, security -------------------------------------------

LANGUAGE_CODE = "en"
# The pages speak English and Persian (right to left); arena/locale holds the translation.
LANGUAGES = [("en", "English"), ("fa", "فارسی")]
LOCALE_PATHS = [BASE_DIR / "arena" / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# The pages send people who must sign in here (then back).
LOGIN_URL = "login"

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request when it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    CSRF_COOKIE_HTTPONLY = False  # the web pages' JavaScript reads it for POSTs
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# The names this module read from the environment, in order (checked against deployment files).
ENVIRONMENT_VARIABLES = tuple(env.names_read)

# The pages' forms: as many bytes besides their files as a JSON or form body to the API may
# have (arena.api.parsers.MAX_JSON_BYTES); past it Django answers 400 (templates/400.html).
DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024

# Uploads: a multipart body past the upload limit is stopped as it streams in (arena.uploads),
# never written out in full first.
FILE_UPLOAD_HANDLERS = [
    "arena.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
