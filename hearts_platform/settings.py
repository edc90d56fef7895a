"""Django settings for Bidel, read from environment variables with safe defaults.

Variables (all optional except SECRET_KEY when DEBUG is off):

- ``DEBUG``: off unless set to 1/true/yes/on.
- ``SECRET_KEY``: required when DEBUG is off; the process refuses to start without it.
- ``ALLOWED_HOSTS``: comma-separated; defaults to the loopback names.
- ``CSRF_TRUSTED_ORIGINS``: comma-separated origins (``https://bidel.example``).
- ``DATABASE_URL``: e.g. ``postgres://user@host:5432/db``; default: SQLite in var/.
- ``REDIS_URL``: when set, Celery's broker and result backend and the cache; else an embedded
  broker in var/ that needs no server (see hearts_runner/broker.py) and a file cache.
- ``BIDEL_VAR_DIR``: where the SQLite file, the embedded broker, results and cache live
  (default: ``var/`` in the project).
- ``CELERY_TASK_SOFT_TIME_LIMIT`` / ``CELERY_TASK_TIME_LIMIT``: seconds (defaults 900 / 960).
- ``HEALTH_TIMEOUT``: seconds the health check waits for broker and workers (default 1).
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from hearts_platform.env import Env, SettingsError
from hearts_runner.broker import embedded_transport, redis_transport
from hearts_runner.config import RUNNER_QUEUE

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

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
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
# embedded default) through one follower per match per web process (arena/live.py); the
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
}
# The runner tier (hearts_runner, docs/operations.md): matches and validations go to the
# runners' queue as self-contained jobs; on one host a worker may serve both queues.
CELERY_TASK_ROUTES = {"runner.*": {"queue": RUNNER_QUEUE}}
CELERY_INCLUDE = ["hearts_runner.tasks"]
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True

HEALTH_TIMEOUT = float(env.int("HEALTH_TIMEOUT", 1, minimum=1))

# Uploaded bots run in the sandbox (bots_sdk.sandbox; BIDEL_SANDBOX picks the backend). Only a
# development machine without one may turn it off, and then runs only its own bots.
BIDEL_UNSAFE_NO_SANDBOX = env.bool("BIDEL_UNSAFE_NO_SANDBOX", False)
# A running match whose worker is silent this long is given to another worker by the reaper.
MATCH_LEASE_SECONDS = env.int("MATCH_LEASE_SECONDS", 20 * 60, minimum=1)
# A queued match unclaimed this long has its message sent again (a broker may lose messages).
MATCH_RESEND_SECONDS = env.int("MATCH_RESEND_SECONDS", 120, minimum=1)

# --- REST API -------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # ``?format=`` filters tournaments by format; responses are JSON (or the browsable API by
    # the Accept header), never chosen by a query parameter.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PAGINATION_CLASS": "arena.api.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_RENDERER_CLASSES": [
        "arena.api.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "EXCEPTION_HANDLER": "arena.api.views.api_exception_handler",
    # Per user (challenges, token) or per address (signup, login); the forms count in the same
    # buckets as the API (arena/web.py).
    "DEFAULT_THROTTLE_RATES": {
        "challenges": env.str("CHALLENGE_RATE", "30/hour"),
        # Games a person starts against bots (anonymous visitors too: counted per address).
        "human_games": env.str("HUMAN_GAME_RATE", "30/hour"),
        "signup": "20/hour",
        "login": "30/minute",
        "token": "20/hour",
    },
    # uvicorn faces the clients: the address is REMOTE_ADDR; a client's X-Forwarded-For would
    # otherwise give it a fresh throttle bucket per request.
    "NUM_PROXIES": 0,
}
#: Challenges one user may have queued or running at once.
CHALLENGE_MAX_OPEN = 3
#: Failed log-ins of one username from one address before both doors refuse it for the rest
#: of the window (seconds from the first failure): arena/logins.py.
LOGIN_MAX_FAILURES = 5
LOGIN_FAILURE_WINDOW = 15 * 60

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

# Uploads: a multipart body past the upload limit is stopped as it streams in (arena.uploads),
# never written out in full first.
FILE_UPLOAD_HANDLERS = [
    "arena.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
