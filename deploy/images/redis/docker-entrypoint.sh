#!/usr/bin/env bash
# The part of the official redis image's entrypoint that docker-compose.yml relies on:
#   - `docker run IMAGE --appendonly yes` (or a .conf file) means `redis-server ...`;
#   - started as root, it gives /data to the redis user and drops to it.
# The official image is built with protected mode off by default (the container's network is the
# boundary); Debian's redis-server keeps it on, which refuses every client from another container
# when no password is set. So unless a config file given first sets protected-mode itself,
# `--protected-mode no` goes before the container's own arguments (which can still override it).
set -Eeuo pipefail

if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
    set -- redis-server "$@"
fi

if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' +
    umask 0077
    exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi

if [ "$1" = redis-server ]; then
    shift
    config=()
    if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
        config=("$1")
        shift
    fi
    if [ ${#config[@]} -eq 0 ] || ! grep -qE '^[[:space:]]*protected-mode[[:space:]]' "${config[0]}" 2>/dev/null; then
        set -- --protected-mode no "$@"
    fi
    set -- redis-server "${config[@]}" "$@"
fi

exec "$@"
