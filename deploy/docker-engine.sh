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
#   BIDEL_DOCKER_STORAGE_DRIVER storage driver: overlay2, vfs or auto (auto: overlay2 where
#                               this kernel mounts an overlay on the data root's disk, else vfs)
#   BIDEL_DOCKER_DATA_ROOT      images, containers, volumes   (/var/lib/bidel-docker for vfs,
#                               /var/lib/bidel-docker-overlay2 for overlay2: one per driver)
#   BIDEL_DOCKER_LOG            dockerd's log                 (/var/log/bidel-dockerd.log)
#   BIDEL_DOCKER_START_TIMEOUT  seconds to wait for the engine (60)
set -euo pipefail

LOG=${BIDEL_DOCKER_LOG:-/var/log/bidel-dockerd.log}
STORAGE_DRIVER=${BIDEL_DOCKER_STORAGE_DRIVER:-auto}
START_TIMEOUT=${BIDEL_DOCKER_START_TIMEOUT:-60}
PIDFILE=/var/run/docker.pid

say() { echo "docker-engine: $*"; }
die() { echo "docker-engine: ERROR: $*" >&2; exit 1; }

# overlay2 shares an image's layers between its containers; vfs copies the whole image for
# each one (a container of the 1.4 GB runner image: seconds to create, a minute to remove) and
# works everywhere. Whether overlay2 works is tried, not guessed: an overlay mounted on the
# disk of the data root, as dockerd would mount one.
overlay_works() {
    local scratch
    local parent
    parent=$(dirname "${BIDEL_DOCKER_DATA_ROOT:-/var/lib/bidel-docker}")
    mkdir -p "$parent"
    scratch=$(mktemp -d "$parent/.bidel-overlay-probe.XXXXXX") || return 1
    mkdir -p "$scratch/lower" "$scratch/upper" "$scratch/work" "$scratch/merged"
    echo probe > "$scratch/lower/file"
    local ok=1
    if mount -t overlay overlay \
        -o "lowerdir=$scratch/lower,upperdir=$scratch/upper,workdir=$scratch/work" \
        "$scratch/merged" 2>/dev/null; then
        if [ "$(cat "$scratch/merged/file" 2>/dev/null)" = probe ]; then ok=0; fi
        umount "$scratch/merged" 2>/dev/null || true
    fi
    rm -rf "$scratch"
    return $ok
}

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

chosen=""
if [ "$STORAGE_DRIVER" = auto ]; then
    chosen=1
    if overlay_works; then STORAGE_DRIVER=overlay2; else STORAGE_DRIVER=vfs; fi
fi

start_dockerd() {  # start_dockerd DRIVER: a detached dockerd on that driver's data root
    if [ "$1" = vfs ]; then
        DATA_ROOT=${BIDEL_DOCKER_DATA_ROOT:-/var/lib/bidel-docker}
    else
        DATA_ROOT=${BIDEL_DOCKER_DATA_ROOT:-/var/lib/bidel-docker-$1}
    fi
    mkdir -p "$DATA_ROOT" "$(dirname "$LOG")"
    # --iptables=false/--ip-masq=false: no NAT rules on the host (nothing here needs to reach
    # out of a container but builds, which use --network host). --bridge=none: no default
    # docker0; containers use user-defined networks (with DNS between them) or --network
    # host/none. The storage driver: overlay2 where it mounts, else vfs (see overlay_works).
    say "starting dockerd (storage $1, data in $DATA_ROOT, log in $LOG)"
    echo "=== $(date -u +%FT%TZ) docker-engine.sh starting dockerd ($1)" >> "$LOG"
    setsid nohup dockerd \
        --storage-driver="$1" \
        --iptables=false --ip-masq=false --bridge=none \
        --data-root "$DATA_ROOT" \
        --pidfile "$PIDFILE" \
        >> "$LOG" 2>&1 < /dev/null &
    running_pid=$!
}

wait_for_dockerd() {  # 0 once `docker info` answers; 1, saying why, if dockerd dies or is late
    started=$(date +%s.%N)
    local deadline=$(( $(date +%s) + START_TIMEOUT ))
    until docker info >/dev/null 2>&1; do
        if ! kill -0 "$running_pid" 2>/dev/null; then
            echo "--- last lines of $LOG:" >&2; tail -n 30 "$LOG" >&2
            echo "docker-engine: dockerd (pid $running_pid) exited before answering" >&2
            return 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "--- last lines of $LOG:" >&2; tail -n 30 "$LOG" >&2
            echo "docker-engine: dockerd (pid $running_pid) did not answer 'docker info' within ${START_TIMEOUT}s" >&2
            return 1
        fi
        sleep 0.25
    done
}

if [ -z "$running_pid" ]; then start_dockerd "$STORAGE_DRIVER"; fi
if ! wait_for_dockerd; then
    # An overlay that mounts may still be refused by dockerd (say, a filesystem without d_type):
    # where the driver was chosen here, vfs is the one that works everywhere.
    if [ -n "$chosen" ] && [ "$STORAGE_DRIVER" != vfs ] && ! kill -0 "$running_pid" 2>/dev/null; then
        say "dockerd refused $STORAGE_DRIVER; starting it on vfs"
        STORAGE_DRIVER=vfs
        rm -f "$PIDFILE"
        start_dockerd vfs
        wait_for_dockerd || die "dockerd did not start on vfs either"
    else
        die "dockerd did not start"
    fi
fi
say "dockerd (pid $running_pid) answered after $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
print_versions
