# The one image of web, worker, beat, migrate and the runners (docker-compose.yml). Runners
# start as root (user: "0" in compose) to confine each bot; everything else runs as bidel.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    BIDEL_VAR_DIR=/var/lib/bidel

# bubblewrap, util-linux (unshare, setpriv, prlimit, mount) and libseccomp2: the sandbox's
# layers (docs/security.md). The toolchains and runtimes of bots in other languages
# (docs/languages.md), which runners build and run in the sandbox: g++, rustc, the JDK, Node.
# (The JDK's installer links its manual pages, whose folder the slim image leaves out.)
# g++ also compiles the engine (below), which needs Python's headers: python.org's image has
# them, Debian's python3 (the stand-in of deploy/base-image.sh) takes them from python3-dev.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install --yes --no-install-recommends bubblewrap util-linux mount libseccomp2 \
        g++ libc6-dev rustc openjdk-17-jdk-headless nodejs \
    && if ! python -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))'; then \
        apt-get install --yes --no-install-recommends python3-dev; fi \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --uid 10001 bidel \
    && mkdir -p /var/lib/bidel && chown bidel /var/lib/bidel

WORKDIR /app
# The pinned dependencies first, in a layer of their own: a change of our code alone reuses it.
# (bidel-sdk is ours: installed below from sdk/, which holds no third-party dependency.)
COPY pyproject.toml constraints.txt README.md ./
RUN python -c "import tomllib; print('\n'.join(d for d in tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'] if not d.startswith('bidel-sdk')))" > /tmp/requirements.txt \
    && pip install -c constraints.txt -r /tmp/requirements.txt && rm /tmp/requirements.txt
# The code in one layer: what .dockerignore admits by name (the packages, sdk/, docs/) and
# nothing else, so no .env, backup or key beside docker-compose.yml is ever copied (the tests,
# examples and deploy/ stay out too: no service runs them). The build stops, before anything
# is tagged, if the folder copied holds any other name or a hidden file (a context sent by a
# tool that ignores .dockerignore): the list is .dockerignore's, which admits the same names.
# On a storage driver without copy-on-write (vfs) every layer is a whole copy of the image's
# files, so fewer is faster.
# The SDK's build compiles the engine's hot modules with mypyc (sdk/setup.py): in the image it
# must, or the build fails, so that every runner, and every bot it sandboxes, gets that speed.
# It is installed in place (-e), as `make` does: the processes run from /app, whose engine/
# would otherwise shadow a compiled copy in site-packages, and the sandbox shows a bot the
# same folders. Their bytecode is written here, once: a bot sees them read-only.
COPY . .
RUN unexpected="$(ls -A | grep -vxE 'pyproject\.toml|constraints\.txt|README\.md|manage\.py|arena|hearts_platform|hearts_runner|engine|bots_sdk|sdk|docs'; find . -mindepth 2 -name '.*')" \
    && if [ -n "$unexpected" ]; then echo "not for the image (.dockerignore): $unexpected" >&2; exit 1; fi \
    && BIDEL_ENGINE_BUILD=compiled pip install --no-deps -c constraints.txt -e ./sdk \
    && pip install --no-deps -c constraints.txt . \
    && python -m compileall -q engine bots_sdk \
    && BIDEL_ENGINE=compiled python -m engine --version \
    && DEBUG=1 python manage.py collectstatic --noinput

USER bidel
EXPOSE 8000
CMD ["uvicorn", "hearts_platform.asgi:application", "--host=0.0.0.0", "--port=8000", "--workers=3", "--ws=websockets-sansio", "--ws-max-size=65536", "--lifespan=off"]
