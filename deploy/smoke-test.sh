#!/usr/bin/env bash
# Prove the offline images work together the way docker-compose.yml uses them: PostgreSQL and
# Redis from postgres:15 and redis:7 on a user-defined network, reached by name from other
# containers; then, if bidel:latest exists, the app's migrations and health endpoint against them.
#
#   bash deploy/smoke-test.sh                 (BIDEL_APP_IMAGE=IMAGE tests another app image)
#
# Everything it creates is named bidel-smoke-* and removed on exit (BIDEL_SMOKE_KEEP=1 keeps it).
# Prints "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

P=bidel-smoke
NET=$P-net
PG=$P-postgres
REDIS=$P-redis
WEB=$P-web
WORKER=$P-worker
APP=${BIDEL_APP_IMAGE:-bidel:latest}
passed=0 failed=0

check() {  # check DESCRIPTION COMMAND...
    local what=$1 out; shift
    if out=$("$@" 2>&1); then
        echo "ok   $what${out:+: $(echo "$out" | tr '\n' ' ' | cut -c1-120)}"; passed=$((passed + 1))
    else
        echo "FAIL $what: $(echo "$out" | tail -n 5 | tr '\n' ' ' | cut -c1-400)"; failed=$((failed + 1))
    fi
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
    local limit=$1; shift
    local deadline=$(( $(date +%s) + limit ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 1
    done
}
cleanup() {
    [ -n "${BIDEL_SMOKE_KEEP:-}" ] && return
    docker rm -f "$WEB" "$WORKER" "$PG" "$REDIS" >/dev/null 2>&1
    docker volume rm "$P-pg" "$P-redis" >/dev/null 2>&1
    docker network rm "$NET" >/dev/null 2>&1
}
trap cleanup EXIT
on_net() { docker run --rm --network "$NET" "$@"; }

for image in postgres:15 redis:7; do
    docker image inspect "$image" >/dev/null 2>&1 || { echo "no image $image: run deploy/base-image.sh" >&2; exit 1; }
done
BIDEL_SMOKE_KEEP='' cleanup

t0=$(date +%s)
check "network $NET" docker network create --label org.bidel.smoke=1 "$NET"
check "start $PG (postgres:15)" docker run -d --name "$PG" --network "$NET" \
    -e POSTGRES_USER=bidel -e POSTGRES_PASSWORD=bidel -e POSTGRES_DB=bidel \
    -v "$P-pg:/var/lib/postgresql/data" postgres:15
check "start $REDIS (redis:7 redis-server --appendonly yes)" docker run -d --name "$REDIS" --network "$NET" \
    -v "$P-redis:/data" redis:7 redis-server --appendonly yes

# What compose's healthchecks run, inside each container.
check "healthcheck: pg_isready -U bidel -d bidel" wait_for 90 docker exec "$PG" pg_isready -U bidel -d bidel
check "healthcheck: redis-cli ping" wait_for 30 docker exec "$REDIS" redis-cli ping

# From other containers on the network, by name.
check "pg_isready -h $PG from another container" on_net postgres:15 pg_isready -h "$PG" -U bidel -d bidel
check "psql with the password over the network" \
    on_net -e PGPASSWORD=bidel postgres:15 psql -h "$PG" -U bidel -d bidel -tAc 'select current_user, version()'
check "a wrong password is refused over the network" \
    on_net -e PGPASSWORD=wrong postgres:15 sh -c "if psql -h $PG -U bidel -d bidel -tAc 'select 1' 2>/tmp/err; then exit 1; fi; grep -o 'password authentication failed[^\"]*' /tmp/err"
check "redis-cli -h $REDIS ping from another container" \
    on_net redis:7 sh -c "test \"\$(redis-cli -h $REDIS ping)\" = PONG && echo PONG"
check "redis keeps an append-only file in /data" \
    docker exec "$REDIS" sh -c 'redis-cli config get appendonly | tail -n 1 | grep -qx yes && ls /data'

if docker image inspect "$APP" >/dev/null 2>&1; then
    # The app as compose runs it: migrate, then uvicorn and one Celery worker (the health
    # endpoint answers 200 only when a worker answers a ping).
    app_env=(-e DEBUG=0 -e SECRET_KEY=smoke-test-not-secret-smoke-test-not-secret-0123456789
             -e ALLOWED_HOSTS="$WEB,localhost,127.0.0.1" -e BIDEL_VAR_DIR=/var/lib/bidel
             -e DATABASE_URL="postgres://bidel:bidel@$PG:5432/bidel" -e REDIS_URL="redis://$REDIS:6379/0")
    check "$APP: manage.py migrate against $PG" \
        on_net "${app_env[@]}" "$APP" python manage.py migrate --noinput
    check "$APP: start uvicorn ($WEB)" docker run -d --name "$WEB" --network "$NET" "${app_env[@]}" "$APP"
    check "$APP: start a Celery worker ($WORKER)" docker run -d --name "$WORKER" --network "$NET" "${app_env[@]}" \
        "$APP" celery -A hearts_platform worker --loglevel=INFO --concurrency=1
    # From another container (the small python image): the status and the body, 503 or not.
    health="import urllib.request, urllib.error
try:
    r = urllib.request.urlopen('http://$WEB:8000/api/health/', timeout=10); print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode()); raise SystemExit(1)"
    check "GET http://$WEB:8000/api/health/ from another container answers 200" \
        wait_for 90 on_net python:3.11-slim-bookworm python -c "$health"
    check "health answer" on_net python:3.11-slim-bookworm python -c "$health"
else
    echo "skip the app checks: no image $APP (docker build --network host -t bidel:latest .)"
fi

echo "smoke test took $(( $(date +%s) - t0 ))s"
echo "smoke test: $passed passed, $failed failed"
[ "$failed" = 0 ]
