#!/usr/bin/env bash
# Provide the base images that the repository's Dockerfile and docker-compose.yml name
# (python:3.11-slim-bookworm, postgres:15, redis:7) on a machine that cannot pull them.
#
#   bash deploy/docker-engine.sh && bash deploy/base-image.sh
#
# For each official name: if the image is already here, nothing is done; else a pull is tried
# (short timeout); if that fails, a local stand-in is built from Debian's packages and tagged
# with both its own name (bidel/...) and the official one. The stand-ins start from
# bidel/bookworm:latest, a debootstrap of Debian bookworm from this machine's configured mirror.
# A second run rebuilds nothing unless a Dockerfile, an entrypoint or the host files copied in
# changed (the build context's hash is kept in the image's label org.bidel.context).
#
# Settings (environment):
#   BIDEL_PULL_TIMEOUT   seconds for each `docker pull` try; 0 skips pulling     (15)
#   BIDEL_REBUILD=1      rebuild every stand-in, bidel/bookworm included
#   BIDEL_DEBIAN_MIRROR  mirror for debootstrap        (the one in /etc/apt/sources*)
#   BIDEL_BUILD_DIR      scratch space for the rootfs and build contexts (/var/tmp/bidel-images)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
IMAGES=$HERE/images
SUITE=bookworm
PULL_TIMEOUT=${BIDEL_PULL_TIMEOUT:-15}
REBUILD=${BIDEL_REBUILD:-}
BUILD_DIR=${BIDEL_BUILD_DIR:-/var/tmp/bidel-images}
BASE=bidel/bookworm:latest
LABEL=org.bidel.standin-for

say() { echo "base-image: $*"; }
die() { echo "base-image: ERROR: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }
label_of() { docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

docker info >/dev/null 2>&1 || die "no Docker engine answers: run deploy/docker-engine.sh first"
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and the host's configuration files)"
mkdir -p "$BUILD_DIR"

# --- what this machine's apt, TLS and pip are configured with ----------------------------------

# The active apt source files: sources.list and sources.list.d/*.list|*.sources (the ".disabled"
# ones are not read by apt, so not copied).
host_source_files() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -s "$f" ] && echo "$f"
    done
    return 0
}

# The first URI serving suite $SUITE of type deb, from either source format.
debian_mirror() {
    local f
    if [ -n "${BIDEL_DEBIAN_MIRROR:-}" ]; then echo "$BIDEL_DEBIAN_MIRROR"; return; fi
    for f in $(host_source_files); do
        case "$f" in
        *.sources)
            awk -v suite="$SUITE" '
                BEGIN { RS = ""; FS = "\n" }
                {
                    delete k
                    for (i = 1; i <= NF; i++) {
                        if ($i ~ /^#/ || $i !~ /^[A-Za-z-]+:/) continue
                        n = index($i, ":"); key = tolower(substr($i, 1, n - 1)); v = substr($i, n + 1)
                        gsub(/^[ \t]+|[ \t]+$/, "", v); k[key] = v
                    }
                    if (tolower(k["enabled"]) == "no") next
                    if ((" " k["types"] " ") !~ / deb /) next
                    if ((" " k["suites"] " ") !~ (" " suite " ")) next
                    split(k["uris"], u, /[ \t]+/); print u[1]; exit
                }' "$f" ;;
        *)
            sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" \
                | awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }' ;;
        esac
    done | grep -E '^(https?|ftp)://' | head -n 1
}

# Copies of the host's apt sources into $1/etc/apt, minus entries a container cannot reach
# (file: and cdrom: URIs), with the keyrings their Signed-By names.
copy_host_apt_sources() {
    local dest=$1 f out keyring
    mkdir -p "$dest/etc/apt/sources.list.d"
    for f in $(host_source_files); do
        out=$dest${f}
        case "$f" in
        *.sources)
            awk 'BEGIN { RS = ""; ORS = "\n\n" } !/\n[Uu][Rr][Ii][Ss]:[ \t]*(file|cdrom):/ { print }' "$f" > "$out" ;;
        *)
            grep -vE '^[[:space:]]*deb(-src)?[[:space:]]+(\[[^]]*\][[:space:]]+)?(file|cdrom):' "$f" > "$out" || true ;;
        esac
        [ -s "$out" ] || rm -f "$out"
    done
    for keyring in $(cat "$dest"/etc/apt/sources.list "$dest"/etc/apt/sources.list.d/* 2>/dev/null \
                     | grep -oiE 'signed-by[:=][[:space:]]*/[^] ]+' | sed -E 's/^[^/]*//' | sort -u); do
        if [ -f "$keyring" ] && [ ! -e "$dest$keyring" ]; then
            mkdir -p "$dest$(dirname "$keyring")"; cp "$keyring" "$dest$keyring"
        fi
    done
}

# The host's apt transport settings (proxies, Valid-Until checks of a snapshot mirror,
# retries), as apt itself resolves them from all of /etc/apt/apt.conf*.
host_apt_acquire_conf() {
    apt-config dump | grep -E '^Acquire::((http|https|ftp)(::| )|Check-Valid-Until |Check-Date |Retries |ForceIPv4 |ForceIPv6 )' || true
}

# The certificates in the host's bundle that Debian's ca-certificates does not ship (a site CA, a
# TLS-inspecting proxy's CA), one PEM file each, into directory $1: where update-ca-certificates
# keeps them when a package in the image regenerates the bundle.
host_extra_cas() {
    local dest=$1 bundle=/etc/ssl/certs/ca-certificates.crt known
    mkdir -p "$dest"
    [ -s "$bundle" ] || return 0
    known=$(mktemp)
    find /usr/share/ca-certificates -name '*.crt' -type f -exec cat {} + > "$known" 2>/dev/null || true
    awk -v known="$known" -v dest="$dest" '
        /-----BEGIN CERTIFICATE-----/ { inpem = 1; body = ""; pem = "" }
        inpem { pem = pem $0 "\n"; if ($0 !~ /-----/) body = body $0 }
        /-----END CERTIFICATE-----/ {
            inpem = 0
            if (FILENAME == known) seen[body] = 1
            else if (!(body in seen)) {
                n++; out = dest "/host-extra-" n ".crt"; printf "%s", pem > out; close(out); seen[body] = 1
            }
        }' "$known" "$bundle"
    rm -f "$known"
}

# --- bidel/bookworm: debootstrap + docker import -----------------------------------------------

build_bookworm() {
    local mirror rootfs t0 t1 extra
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || die "no http(s) mirror for $SUITE in /etc/apt/sources*; set BIDEL_DEBIAN_MIRROR"
    if ! command -v debootstrap >/dev/null 2>&1; then
        say "installing debootstrap"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
            || die "apt-get install debootstrap failed"
    fi
    rootfs=$BUILD_DIR/rootfs-$SUITE
    rm -rf "$rootfs"
    say "debootstrap --variant=minbase $SUITE from $mirror (log: $BUILD_DIR/debootstrap.log)"
    t0=$(now)
    if ! debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" > "$BUILD_DIR/debootstrap.log" 2>&1; then
        tail -n 20 "$BUILD_DIR/debootstrap.log" >&2
        die "debootstrap failed"
    fi
    say "debootstrap took $(since "$t0")s"

    # Trim and configure as Debian's official images do (deploy/images/bookworm/rootfs), then
    # point apt at the same sources, transport settings and CAs the host uses.
    cp -R "$IMAGES/bookworm/rootfs/." "$rootfs/"
    chmod 755 "$rootfs/usr/sbin/policy-rc.d"
    rm -f "$rootfs/etc/apt/sources.list"
    copy_host_apt_sources "$rootfs"
    if ! ls "$rootfs"/etc/apt/sources.list.d/* "$rootfs"/etc/apt/sources.list >/dev/null 2>&1; then
        echo "deb $mirror $SUITE main" > "$rootfs/etc/apt/sources.list"
    fi
    host_apt_acquire_conf > "$rootfs/etc/apt/apt.conf.d/90bidel-host-acquire"
    # TLS before and after Debian's ca-certificates is installed: the host's bundle as the
    # bundle, and its extra CAs where update-ca-certificates keeps them.
    mkdir -p "$rootfs/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    host_extra_cas "$rootfs/usr/local/share/ca-certificates/bidel-host"
    extra=$(find "$rootfs/usr/local/share/ca-certificates/bidel-host" -name '*.crt' | wc -l)
    say "copied the host's apt sources, apt transport settings, CA bundle ($extra extra CAs)"

    (cd "$rootfs" && rm -rf var/cache/apt/archives/*.deb var/lib/apt/lists/* var/cache/apt/*.bin \
        var/log/*.log var/log/apt/* dev/* tmp/* \
        usr/share/man/* usr/share/info/* usr/share/locale/* usr/share/lintian/*)
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    : > "$rootfs/etc/resolv.conf"        # docker mounts its own; not the build host's
    : > "$rootfs/etc/machine-id"
    echo localhost > "$rootfs/etc/hostname"

    t1=$(now)
    tar --numeric-owner -C "$rootfs" -c . | docker import \
        --change 'CMD ["bash"]' \
        --change 'ENV LANG=C.UTF-8' \
        --change "LABEL $LABEL=debian:$SUITE org.bidel.mirror=$mirror" \
        --message "debootstrap --variant=minbase $SUITE $mirror" \
        - "$BASE" > /dev/null
    say "docker import took $(since "$t1")s; $BASE built in $(since "$t0")s"
    rm -rf "$rootfs"
}

BASE_READY=""
ensure_bookworm() {
    [ -z "$BASE_READY" ] || return 0
    if [ -z "$REBUILD" ] && have_image "$BASE"; then
        say "$BASE: present"
    else
        build_bookworm
    fi
    BASE_READY=1
}

# --- the stand-ins built from Dockerfiles ------------------------------------------------------

# Build context for images/$1: its own files plus host/, the host files the Dockerfile copies
# to the same paths in the image (only the python image uses them: pip's configuration).
make_context() {
    local name=$1 ctx=$BUILD_DIR/context-$1 v
    rm -rf "$ctx"; mkdir -p "$ctx/host"
    cp -R "$IMAGES/$name/." "$ctx/"
    if [ "$name" = python ]; then
        # Machine-wide pip configuration (e.g. cert = the CA bundle, constraints); the user's own
        # (~/.config/pip) points at this host's disk, so it is left out.
        [ -f /etc/pip.conf ] && install -D -m 644 /etc/pip.conf "$ctx/host/etc/pip.conf"
        if [ -d /etc/xdg/pip ]; then mkdir -p "$ctx/host/etc/xdg"; cp -R /etc/xdg/pip "$ctx/host/etc/xdg/pip"; fi
        # An index or proxy given in the environment, so pip in the image reaches what the host's
        # does; local paths (file: URLs, find-links) are not reachable from an image.
        mkdir -p "$ctx/host/opt/venv"
        {
            echo "[global]"
            for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_PROXY; do
                local val=${!v:-} key
                key=$(echo "${v#PIP_}" | tr 'A-Z_' 'a-z-')
                val=$(echo "$val" | tr ' ' '\n' | grep -vE '^(file:|/|$)' | tr '\n' ' ' | sed 's/ $//' || true)
                [ -n "$val" ] && echo "$key = $val"
            done
            if [ -n "${PIP_DEFAULT_TIMEOUT:-}" ]; then echo "timeout = $PIP_DEFAULT_TIMEOUT"; fi
        } > "$ctx/host/opt/venv/pip.conf"
    fi
    echo "$ctx"
}

context_hash() {  # of every file's path and content, and of the base image's id
    (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' sha256sum; docker image inspect --format '{{.Id}}' "$BASE") \
        | sha256sum | cut -c1-16
}

# ensure_standin NAME BIDEL_TAG OFFICIAL_TAG
ensure_standin() {
    local name=$1 tag=$2 official=$3 ctx hash t0
    if [ -z "$REBUILD" ] && have_image "$official" && [ -z "$(label_of "$official" "$LABEL")" ]; then
        say "$official: present (not a stand-in)"
        return
    fi
    if [ -z "$REBUILD" ] && ! have_image "$official" && [ "$PULL_TIMEOUT" != 0 ]; then
        t0=$(now)
        if timeout "$PULL_TIMEOUT" docker pull -q "$official" > "$BUILD_DIR/pull.log" 2>&1; then
            say "$official: pulled in $(since "$t0")s"
            return
        fi
        say "$official: pull failed ($(tail -n 1 "$BUILD_DIR/pull.log" | cut -c1-160)); using the stand-in $tag"
    fi
    ensure_bookworm
    ctx=$(make_context "$name")
    hash=$(context_hash "$ctx")
    if [ -z "$REBUILD" ] && [ "$(label_of "$tag" org.bidel.context)" = "$hash" ]; then
        say "$tag: up to date"
    else
        say "building $tag (log: $BUILD_DIR/build-$name.log)"
        t0=$(now)
        if ! docker build --network host --pull=false \
                --label "$LABEL=$official" --label "org.bidel.context=$hash" \
                --build-arg "BASE=$BASE" -t "$tag" "$ctx" > "$BUILD_DIR/build-$name.log" 2>&1; then
            tail -n 30 "$BUILD_DIR/build-$name.log" >&2
            die "docker build of $tag failed"
        fi
        say "$tag built in $(since "$t0")s"
    fi
    docker tag "$tag" "$official"
    rm -rf "$ctx"
}

t_all=$(now)
ensure_standin python   bidel/python:3.11-bookworm python:3.11-slim-bookworm
ensure_standin postgres bidel/postgres:15          postgres:15
ensure_standin redis    bidel/redis:7              redis:7

say "done in $(since "$t_all")s"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}' \
    | grep -E '^(bidel/(bookworm|python|postgres|redis):|python:3.11-slim-bookworm |postgres:15 |redis:7 )' | sort \
    | awk 'BEGIN { printf "%-34s %-13s %s\n", "IMAGE", "ID", "SIZE" } { printf "%-34s %-13s %s\n", $1, $2, $3 }' 
