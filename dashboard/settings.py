"""Settings, all from the environment (django-environ).

With nothing set: SQLite in ``data/``, Celery tasks run in-process, DEBUG on, loopback only.
Production sets ``DJANGO_DEBUG=false``, ``DJANGO_SECRET_KEY``, ``DJANGO_ALLOWED_HOSTS``,
``DATABASE_URL=postgres://...`` and ``CELERY_BROKER_URL=redis://...``; then
``manage.py check --deploy`` is clean.
"""
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.utils.log import DEFAULT_LOGGING

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(environ.Env().str("PTBENCH_DATA_DIR", default=str(BASE_DIR / "data")))

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")  # optional local overrides; .env is git-ignored

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# The development key is only accepted with DEBUG on; production must set its own (issue #33): with
# DEBUG off an empty key, the development key, a key of Django's startproject or a placeholder stops
# the start (sessions, CSRF and password resets signed with a public key are forgeable).
DEV_SECRET_KEY = "dev-only-insecure-key"
PUBLIC_SECRET_KEYS = frozenset({DEV_SECRET_KEY, "changeme", "change-me", "secret", "secret-key", "your-secret-key"})
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=DEV_SECRET_KEY if DEBUG else environ.Env.NOTSET)
if not DEBUG and (not SECRET_KEY.strip() or SECRET_KEY.strip().lower() in PUBLIC_SECRET_KEYS
                  or SECRET_KEY.startswith("django-insecure-")):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY is empty or a publicly known key, refused with DJANGO_DEBUG=false: set a long random one, "
        "e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served from our static files (no CDN)
    "dashboard.results",
    "dashboard.regressions",
    "dashboard.web",
    "dashboard.api",
    "dashboard.alerts",
    "dashboard.dispatch",
    "dashboard.pipeline",  # after the apps it joins: stored -> detected -> alerted
    "django_celery_beat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "dashboard.middleware.GuardMiddleware",  # NUL in a parameter: 400; database down: 503
    "dashboard.middleware.LoginThrottleMiddleware",  # too many failed sign-ins: 429 (dashboard.throttle)
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "dashboard.web.middleware.SitePagesMiddleware",  # 404 and 403 as pages of the site, DEBUG on or off
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.csp.ContentSecurityPolicyMiddleware",  # every HTML page: scripts from the site only
]

ROOT_URLCONF = "dashboard.urls"
WSGI_APPLICATION = "dashboard.wsgi.application"

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

if "DATABASE_URL" not in env:
    DATA_DIR.mkdir(parents=True, exist_ok=True)  # the embedded default needs its folder
DATABASES = {"default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'ptbench.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # The site, its Celery worker and the runner share one file: writers queue up (IMMEDIATE takes
    # the write lock at BEGIN, so two transactions never deadlock upgrading a read lock, which
    # SQLite answers with an immediate "database is locked"), and readers do not block them (WAL).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20, transaction_mode="IMMEDIATE", init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "admin:login"  # pages that need a signed-in user (triage, alerts) sign in through the admin

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("DJANGO_STATIC_ROOT", default=str(DATA_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise serves from here once collectstatic ran
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- Celery ---------------------------------------------------------------------------------------
# No broker configured: tasks run in-process (eagerly), so the quick start needs no Redis.
# Regression detection runs after every ingest that stored results (queue "analysis").
DETECT_AFTER_INGEST = env.bool("DETECT_AFTER_INGEST", default=True)
# The overview, workload, compare and dynamic pages are served from the cache until the data changes
# (dashboard/results/page_cache.py); this bounds what the data's fingerprint cannot see. 0: off.
PAGE_CACHE_SECONDS = env.int("PTBENCH_PAGE_CACHE_SECONDS", default=60)
# A page not cached yet is rendered by one request; the others asking for it at once wait for its copy
# in the cache this long at most (then render it themselves), instead of every web process rendering it.
PAGE_CACHE_WAIT_SECONDS = 10.0

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=CELERY_BROKER_URL or None)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_CREATE_MISSING_QUEUES = False
CELERY_TASK_DEFAULT_QUEUE = "ingest"
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=360)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Redis hands a case that a lost GPU worker held to another after PTBENCH_VISIBILITY_TIMEOUT, counted
# from a record's stamp: the runner workers renew what they hold and stamp it so that it is handed out
# PTBENCH_HANDOVER_S (600 s) after their last renewal, a worker that does not renew (an older release)
# as delivered now: this must outlast the longest case (runner workers read the same variable; the
# stale-case sweep waits past it; docs/deploying.md, "A lost worker's cases"). The dashboard's own short tasks (queues ingest, analysis, alerts) are handed over after
# PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT instead: this app keeps its unacknowledged messages under keys
# of its own ("dashboard_unacked*"), so neither side's restore ever hands over the other's tasks.
PTBENCH_VISIBILITY_TIMEOUT = env.int("PTBENCH_VISIBILITY_TIMEOUT", default=7200)
# It must outlast CELERY_TASK_TIME_LIMIT: a task still running when it passes is handed out again
# and runs twice at once (a 268 s detection under a 60 s timeout ran in copies, issue #46).
PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT = env.int("PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT", default=CELERY_TASK_TIME_LIMIT + 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT,
    "unacked_key": "dashboard_unacked",
    "unacked_index_key": "dashboard_unacked_index",
    "unacked_mutex_key": "dashboard_unacked_mutex",
    "unacked_restore_interval": env.int("PTBENCH_RESTORE_INTERVAL_S", default=10),
    "unacked_restore_throttle": 1,
}
# A broker that is away is waited for, however long (Celery's default gives up after 100 tries and
# the worker exits): the dashboard worker reconnects and carries on (#33 item 4).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"  # schedules edited in the admin

# Sign-in throttling (dashboard.throttle): this many failures within the window, from one address or
# for one user name, and sign-in answers 429 until the window has passed. Counts are kept in Redis
# (database 2 of the broker's server) when the broker is Redis, so every web process shares them.
LOGIN_THROTTLE_FAILURES = env.int("LOGIN_THROTTLE_FAILURES", default=5)
LOGIN_THROTTLE_WINDOW_S = env.int("LOGIN_THROTTLE_WINDOW_S", default=300)
# The proxies (addresses or networks, e.g. "127.0.0.1,10.0.0.0/8") in front of the web server whose
# X-Forwarded-For is believed: behind one, the sign-in throttle counts the client address it
# forwarded, not the proxy's own (every client would share its count). Empty: REMOTE_ADDR, the
# header ignored (a client could otherwise pick a fresh address for every try).
PTBENCH_TRUSTED_PROXIES = env.list("PTBENCH_TRUSTED_PROXIES", default=[])
# The default cache holds the rendered pages (dashboard/results/page_cache.py): Redis (database 3 of the
# broker's server) when the broker is Redis, so every web process serves a page one of them rendered and
# the version an ingest bumps is seen by all of them; else in the process's memory (the quick start).
_REDIS_BROKER = CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": urlsplit(CELERY_BROKER_URL)._replace(path="/3").geturl(),
                "OPTIONS": {"socket_timeout": 1, "socket_connect_timeout": 1}}
    if _REDIS_BROKER
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                 "LOCATION": urlsplit(CELERY_BROKER_URL)._replace(path="/2").geturl(),
                 "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2}}
    if _REDIS_BROKER
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"},
}

# The detection sweep (beat, regressions.sweep, every two minutes) sends detection for runs stored
# this long ago and never detected (their message lost), the alerts of runs detected and never
# planned, deliveries never tried. Beat's database scheduler installs this entry when it starts.
DETECTION_SWEEP_GRACE_S = env.int("DETECTION_SWEEP_GRACE_S", default=120)
# Detection goes over a run's series this many at a time, each chunk committed with its progress
# (regressions.services.detection_pass); one task works this long, then sends itself on for the
# rest. A pass whose worker has been silent this long is taken over (a running one is never sent
# again before that): longer than a task may run.
DETECTION_CHUNK_SERIES = env.int("DETECTION_CHUNK_SERIES", default=100)
DETECTION_TASK_BUDGET_S = env.float("DETECTION_TASK_BUDGET_S", default=30.0)
DETECTION_LEASE_S = env.int("DETECTION_LEASE_S", default=CELERY_TASK_TIME_LIMIT)
# The noise bands fill (after each ingest's bands, regressions.noise_bands_fill, sent on while some
# are missing; and the beat sweep, regressions.noise_bands_sweep, every five minutes) stores /compare/'s
# bands of builds that have none (stored before the pipeline kept them, a bulk import, a set dropped
# stale by a late run), newest first, working this long at most per task.
NOISE_BANDS_SWEEP_BUDGET_S = env.float("NOISE_BANDS_SWEEP_BUDGET_S", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "regressions: detect runs never detected": {"task": "regressions.sweep", "schedule": 120.0, "options": {"queue": "analysis"}},
    "regressions: noise bands of every build": {"task": "regressions.noise_bands_sweep", "schedule": 300.0,
                                                "options": {"queue": "analysis"}},
}

# --- Dispatch of requested runs to the runner workers (issue #4) ---------------------------------
# Per-case subprocess limit of a requested run (each of the cold and warm phases), unless the request
# names one; the worker's soft and hard Celery limits add DISPATCH_TASK_MARGIN_S on top.
DISPATCH_CASE_TIMEOUT_S = env.float("DISPATCH_CASE_TIMEOUT_S", default=900.0)
DISPATCH_TASK_MARGIN_S = env.float("DISPATCH_TASK_MARGIN_S", default=300.0)
# A case a worker started and never finished (its worker lost past the visibility timeout, a hard
# time limit) is re-queued this many times by the stale-case sweep, then marked failed.
DISPATCH_MAX_SENDS = env.int("DISPATCH_MAX_SENDS", default=3)

# Bisection (issue #31, docs/bisect.md). Started by hand (``manage.py bisect``, the API) anywhere;
# automatically for a new regression of a machine class listed here ("*": every class) whose last good
# and first bad builds have builds between them that workers of the class know. Each bisection: runs
# per build before deciding, at most per build, midpoints decided at most, cases requested at most.
BISECT_AUTO_CLASSES = env.list("PTBENCH_BISECT_AUTO_CLASSES", default=[])
BISECT_ATTEMPTS = env.int("PTBENCH_BISECT_ATTEMPTS", default=2)
BISECT_MAX_ATTEMPTS = env.int("PTBENCH_BISECT_MAX_ATTEMPTS", default=6)
BISECT_MAX_STEPS = env.int("PTBENCH_BISECT_MAX_STEPS", default=12)
BISECT_MAX_RUNS = env.int("PTBENCH_BISECT_MAX_RUNS", default=40)
# Commit ranges (issue #41, docs/builds.md): the classes whose new findings get their commits listed
# by a worker's mirror ("*": every class; the classes of PTBENCH_BISECT_AUTO_CLASSES always do, and
# are bisected over commits once listed), and where a commit's page is.
COMMIT_RANGE_CLASSES = env.list("PTBENCH_COMMIT_RANGE_CLASSES", default=[])
COMMIT_URL = env.str("PTBENCH_COMMIT_URL", default="https://github.com/pytorch/pytorch/commit/{sha}")

# --- Ingest ---------------------------------------------------------------------------------------
# A run document larger than this is refused before it is parsed.
INGEST_MAX_DOCUMENT_BYTES = env.int("INGEST_MAX_DOCUMENT_BYTES", default=32 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = INGEST_MAX_DOCUMENT_BYTES

# --- Artifacts (docs/artifacts.md) ------------------------------------------------------------------
# Where uploaded case artifacts (the compiler's TORCH_TRACE logs) are stored, by sha256; an upload
# larger than ARTIFACT_MAX_BYTES is refused with 413. ``manage.py prune_artifacts`` keeps the store bounded.
ARTIFACT_ROOT = Path(env.str("ARTIFACT_ROOT", default=str(DATA_DIR / "artifacts")))
ARTIFACT_MAX_BYTES = env.int("ARTIFACT_MAX_BYTES", default=16 * 1024 * 1024)
# An upload that decompresses past this many bytes, or past this many times its own size (beyond
# 1 MiB), is refused as a gzip bomb (413); the pages tell people to decompress what they download.
ARTIFACT_MAX_EXPANDED_BYTES = env.int("ARTIFACT_MAX_EXPANDED_BYTES", default=512 * 1024 * 1024)
ARTIFACT_MAX_RATIO = env.float("ARTIFACT_MAX_RATIO", default=200.0)
# Uploads that no result references (a worker uploads, then sends the document that references
# it): at most this many bytes of them within ARTIFACT_ORPHAN_HOURS (429 past it), and prune_artifacts
# deletes those older than that.
ARTIFACT_UNREFERENCED_MAX_BYTES = env.int("ARTIFACT_UNREFERENCED_MAX_BYTES", default=1024 * 1024 * 1024)
# The same bound per write token (docs/api-limits.md, range 0..ARTIFACT_UNREFERENCED_MAX_BYTES): one
# token cannot fill the store-wide bound and lock every other token out of uploading.
ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN = env.int("ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN", default=256 * 1024 * 1024)
ARTIFACT_ORPHAN_HOURS = env.float("ARTIFACT_ORPHAN_HOURS", default=24.0)

# --- REST API (/api/v1/, dashboard.api) ------------------------------------------------------------
# Reads are open unless API_READS_REQUIRE_TOKEN is set; writes always need a token (admin: API tokens).
API_READS_REQUIRE_TOKEN = env.bool("API_READS_REQUIRE_TOKEN", default=False)
API_PAGE_SIZE = env.int("API_PAGE_SIZE", default=100)
API_MAX_PAGE_SIZE = env.int("API_MAX_PAGE_SIZE", default=1000)
# Request bodies other than run documents (which INGEST_MAX_DOCUMENT_BYTES limits) are refused with
# 413 past this size.
API_MAX_REQUEST_BYTES = env.int("API_MAX_REQUEST_BYTES", default=1024 * 1024)
# Quotas per write token (dashboard/api/quotas.py, docs/api-limits.md): writes per minute, cases
# queued or running of the runs it requested, bisections running at once; past one: 429 naming it.
API_TOKEN_WRITES_PER_MINUTE = env.int("API_TOKEN_WRITES_PER_MINUTE", default=120)
API_TOKEN_MAX_OPEN_CASES = env.int("API_TOKEN_MAX_OPEN_CASES", default=4000)
API_TOKEN_MAX_BISECTIONS = env.int("API_TOKEN_MAX_BISECTIONS", default=4)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["dashboard.api.auth.ApiTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["dashboard.api.auth.ReadOpenWriteToken"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["dashboard.api.parsers.JSONBodyParser"],
    "DEFAULT_PAGINATION_CLASS": "dashboard.api.pagination.Pagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "dashboard.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ptbench API",
    "DESCRIPTION": "Continuous benchmarking of torch.compile: builds, runs, results, trends, regressions, "
    "comparisons and a verdict for CI. Writes need `Authorization: Token <secret>` (or `Bearer <secret>`).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "dashboard.results.models.Run.Status",
        "ResultStatusEnum": "contract.document.RESULT_STATUSES",
        "RegressionStatusEnum": "dashboard.api.serializers.REGRESSION_STATUSES",
        "RegressionStatusFilterEnum": "dashboard.api.serializers.REGRESSION_STATUS_FILTERS",
        "RegressionKindEnum": "dashboard.api.serializers.REGRESSION_KINDS",
        "RegressionKindFilterEnum": "dashboard.api.serializers.REGRESSION_KIND_FILTERS",
        "BisectionKindEnum": "dashboard.api.serializers.BISECTION_KINDS",
    },
}

# --- Alerts (dashboard.alerts): email through Django's mail framework, Slack incoming webhooks ----
PTBENCH_BASE_URL = env.str("PTBENCH_BASE_URL", default="http://127.0.0.1:8000")  # absolute links in messages
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="ptbench@localhost")
ALERTS_HTTP_TIMEOUT_S = env.float("ALERTS_HTTP_TIMEOUT_S", default=10.0)  # Slack webhook POST
# Webhooks on loopback or private addresses are refused (a subscription would let a user probe the
# dashboard's own network); allow them for a local recorder (tests) or a Slack relay inside the network.
ALERTS_ALLOW_PRIVATE_WEBHOOKS = env.bool("ALERTS_ALLOW_PRIVATE_WEBHOOKS", default=False)
# A failed delivery worth retrying waits these many seconds before each further try (so at most
# 1 + len tries). One past PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT is handed out again while it waits:
# its copies find the try made (send_delivery's attempts_before) and do nothing.
ALERTS_RETRY_COUNTDOWNS_S = env.list("ALERTS_RETRY_COUNTDOWNS_S", cast=float, default=[30.0, 120.0, 480.0, 1920.0])

# --- Security (production: DEBUG off) -------------------------------------------------------------
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True

# Content-Security-Policy of every HTML page (dashboard/csp.py): scripts from the site's own files
# only; set to replace it, empty to send none.
PTBENCH_CSP = env.str("PTBENCH_CSP", default=(
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"))

# The debug page and error e-mails mask the passwords of URLs (broker, result backend) too.
DEFAULT_EXCEPTION_REPORTER_FILTER = "dashboard.debug.UrlPasswordFilter"

LOG_LEVEL = env.str("DJANGO_LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"django.server": DEFAULT_LOGGING["formatters"]["django.server"]},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "django.server": DEFAULT_LOGGING["handlers"]["django.server"],
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # One line per request: Django's own console handler on "django" printed each of its records
        # a second time through the root's, and "django.request" says "Bad Request: /x" for every 4xx
        # that runserver's "django.server" line (or gunicorn's access log) already shows with its
        # status. Server errors are still logged here, with their traceback (docs/deploying.md).
        "django": {"handlers": [], "level": LOG_LEVEL},
        "django.request": {"level": "ERROR"},
        # Redefining "django" resets its children: runserver's request lines keep Django's own
        # handler, format and level (every request, whatever DJANGO_LOG_LEVEL says).
        "django.server": DEFAULT_LOGGING["loggers"]["django.server"],
        # With no broker (tasks in process) kombu warns "No hostname was supplied" on every send.
        **({} if CELERY_BROKER_URL else {"kombu.connection": {"level": "ERROR"}}),
    },
}
