#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine, installing and starting Debian's if needed.
#
#   bash deploy/docker-engine.sh
#
# Idempotent: when `docker info` already answers it prints the versions and exits 0. Otherwise
# it installs Debian's docker.io and docker-compose (one `apt-get update`) if they are missing,
# starts dockerd in the background (no systemd here) and waits until it answers. See
# deploy/README.md for why each dockerd flag is what it is.
#
# Settings (environment):
#   BIDEL_DOCKER_DATA_ROOT      images, containers, volumes   (/var/lib/bidel-docker)
#   BIDEL_DOCKER_LOG            dockerd's log                 (/var/log/bidel-dockerd.log)
#   BIDEL_DOCKER_STORAGE_DRIVER storage driver                (vfs)
#   BIDEL_DOCKER_START_TIMEOUT  seconds to wait for the engine (60)
set -euo pipefail

DATA_ROOT=${BIDEL_DOCKER_DATA_ROOT:-/var/lib/bidel-docker}
LOG=${BIDEL_DOCKER_LOG:-/var/log/bidel-dockerd.log}
STORAGE_DRIVER=${BIDEL_DOCKER_STORAGE_DRIVER:-vfs}
START_TIMEOUT=${BIDEL_DOCKER_START_TIMEOUT:-60}
PIDFILE=/var/run/docker.pid

say() { echo "docker-engine: $*"; }
die() { echo "docker-engine: ERROR: $*" >&2; exit 1; }

print_versions() {
    # The client on PATH may be newer than the engine (here /usr/local/bin/docker 28.x against
    # Debian's 20.10 engine, API 1.41): it negotiates the engine's API version down by itself.
    # Should a client ever refuse, the engine's own client is /usr/bin/docker, or export
    # DOCKER_API_VERSION=<the engine's API version> for the newer one.
    local server
    if ! server=$(docker version --format 'engine {{.Server.Version}} (API {{.Server.APIVersion}}), client {{.Client.Version}} (API {{.Client.APIVersion}})' 2>&1); then
        echo "$server" >&2
        if [ -x /usr/bin/docker ] && api=$(/usr/bin/docker version --format '{{.Server.APIVersion}}' 2>/dev/null); then
            die "the engine answers but '$(command -v docker)' cannot talk to it; use /usr/bin/docker or export DOCKER_API_VERSION=$api"
        fi
        die "'docker version' failed"
    fi
    say "$server"
}

if docker info >/dev/null 2>&1; then
    say "already running"
    print_versions
    exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root: it installs packages and starts dockerd"

# --- install -----------------------------------------------------------------------------------
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1; then
    say "installing Debian's docker.io and docker-compose"
    # Without systemd, a package's postinst would start its service through invoke-rc.d (a
    # dockerd with the default flags); policy-rc.d answering 101 forbids that.
    created_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        created_policy=1
    fi
    # Recommends left out: apparmor (this kernel enforces none), needrestart and
    # cgroupfs-mount (no systemd; cgroups are already mounted).
    apt_ok=1
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends docker.io docker-compose) || apt_ok=0
    if [ -n "$created_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
    [ "$apt_ok" = 1 ] || die "apt-get install docker.io docker-compose failed"
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd not found after installing docker.io"

# --- start -------------------------------------------------------------------------------------
# A pid file left by a dockerd that was killed (the machine's processes are ended between a
# session and CI) stops a new one from starting if its pid got reused: drop it unless that pid
# is a live dockerd, in which case wait for that one instead of starting a second.
running_pid=""
if [ -s "$PIDFILE" ]; then
    pid=$(cat "$PIDFILE")
    if [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then
        running_pid=$pid
        say "dockerd (pid $pid) is running but not answering yet; waiting for it"
    else
        rm -f "$PIDFILE"
    fi
fi

mkdir -p "$DATA_ROOT" "$(dirname "$LOG")"
if [ -z "$running_pid" ]; then
    # --iptables=false/--ip-masq=false: no NAT rules on the host (nothing here needs to reach out
    # of a container but builds, which use --network host). --bridge=none: no default docker0;
    # containers use user-defined networks (with DNS between them) or --network host/none.
    # vfs: works on any filesystem, at the price of a full copy per layer.
    say "starting dockerd (storage $STORAGE_DRIVER, data in $DATA_ROOT, log in $LOG)"
    echo "=== $(date -u +%FT%TZ) docker-engine.sh starting dockerd" >> "$LOG"
    setsid nohup dockerd \
        --storage-driver="$STORAGE_DRIVER" \
        --iptables=false --ip-masq=false --bridge=none \
        --data-root "$DATA_ROOT" \
        --pidfile "$PIDFILE" \
        >> "$LOG" 2>&1 < /dev/null &
    running_pid=$!
fi

started=$(date +%s.%N)
deadline=$(( $(date +%s) + START_TIMEOUT ))
until docker info >/dev/null 2>&1; do
    if ! kill -0 "$running_pid" 2>/dev/null; then
        echo "--- last lines of $LOG:" >&2; tail -n 30 "$LOG" >&2
        die "dockerd (pid $running_pid) exited before answering"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "--- last lines of $LOG:" >&2; tail -n 30 "$LOG" >&2
        die "dockerd (pid $running_pid) did not answer 'docker info' within ${START_TIMEOUT}s"
    fi
    sleep 0.25
done
say "dockerd (pid $running_pid) answered after $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
print_versions
