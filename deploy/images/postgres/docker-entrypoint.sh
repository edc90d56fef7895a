#!/usr/bin/env bash
# The part of the official postgres image's entrypoint that docker-compose.yml relies on:
#   - `docker run IMAGE -c foo=bar` means `postgres -c foo=bar`;
#   - started as root, it fixes the data directory's owner and drops to the postgres user;
#   - on an empty data directory: initdb with POSTGRES_USER (default postgres) and
#     POSTGRES_PASSWORD, the database POSTGRES_DB (default: the user's name), password auth
#     (POSTGRES_HOST_AUTH_METHOD, default scram-sha-256) from any address, then
#     /docker-entrypoint-initdb.d/*.sh|*.sql|*.sql.gz, against a server on the socket only.
# Each POSTGRES_* setting can come from a file instead: POSTGRES_PASSWORD_FILE=/run/secrets/x.
set -Eeuo pipefail

file_env() {  # file_env VAR [DEFAULT]: $VAR, else the content of the file named by $VAR_FILE
    local var=$1 file_var="${1}_FILE" def=${2:-} val
    if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
        echo "error: both $var and $file_var are set (but are exclusive)" >&2
        exit 1
    fi
    val=$def
    if [ -n "${!var:-}" ]; then
        val=${!var}
    elif [ -n "${!file_var:-}" ]; then
        val=$(< "${!file_var}")
    fi
    export "$var"="$val"
    unset "$file_var"
}

if [ "${1:0:1}" = '-' ]; then
    set -- postgres "$@"
fi

if [ "$1" = postgres ]; then
    if [ "$(id -u)" = 0 ]; then
        mkdir -p "$PGDATA" /var/run/postgresql
        chmod 00700 "$PGDATA" || :
        chmod 03777 /var/run/postgresql || :
        find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
        find /var/run/postgresql \! -user postgres -exec chown postgres:postgres '{}' +
        exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
    fi

    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        file_env POSTGRES_USER postgres
        file_env POSTGRES_PASSWORD
        file_env POSTGRES_DB "$POSTGRES_USER"
        file_env POSTGRES_INITDB_ARGS
        auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
        if [ -z "$POSTGRES_PASSWORD" ] && [ "$auth" != trust ]; then
            cat >&2 <<'MSG'
error: the database is uninitialized and no superuser password is set.
       Set POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE), or POSTGRES_HOST_AUTH_METHOD=trust
       to allow every connection without a password.
MSG
            exit 1
        fi

        # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is a list of words, as upstream
        if [ -n "$POSTGRES_PASSWORD" ]; then
            initdb -D "$PGDATA" --username="$POSTGRES_USER" \
                --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS
        else
            initdb -D "$PGDATA" --username="$POSTGRES_USER" $POSTGRES_INITDB_ARGS
        fi
        printf '\nhost all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"

        # Set up with a server nobody else can reach yet: the socket only.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
        psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
        if [ "$POSTGRES_DB" != postgres ]; then
            "${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
        fi
        for f in /docker-entrypoint-initdb.d/*; do
            # shellcheck disable=SC1090  # the operator's own scripts
            case "$f" in
            *.sh)     echo "running $f"; . "$f" ;;
            *.sql)    echo "running $f"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
            *.sql.gz) echo "running $f"; gunzip -c "$f" | "${psql[@]}" --dbname "$POSTGRES_DB" ;;
            *)        [ -e "$f" ] && echo "ignoring $f" ;;
            esac
        done
        pg_ctl -D "$PGDATA" -m fast -w stop
        unset POSTGRES_PASSWORD
        echo "PostgreSQL init process complete; ready for start up."
    fi
fi

exec "$@"
