#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis for the test suite, on loopback, on non-default ports, with
# their data under $KANDEV_SERVICES_DIR. Meant for CI (Debian, run as root) and for developers.
#
#   scripts/services.sh start    install if missing (apt-get, root only), start, wait until ready
#   scripts/services.sh stop     stop both (data stays; `start` reuses it)
#   scripts/services.sh status   say what runs
#   scripts/services.sh env      print the export lines the tests read:
#                                  eval "$(scripts/services.sh env)"
#
# Settings (environment):
#   KANDEV_SERVICES_DIR   data, logs, sockets      (default /tmp/kandev-ci-services; when run
#                                                   as root the PostgreSQL OS user must be able
#                                                   to reach it, so keep it out of /root)
#   KANDEV_CI_PG_PORT     PostgreSQL port          (default 55432)
#   KANDEV_CI_REDIS_PORT  Redis port               (default 56379)
#   KANDEV_CI_PG_OS_USER  OS user running postgres when started as root
#                         (default: `postgres` if it exists, else `kandevci`, created if needed)
#   KANDEV_SERVICES_TIMEOUT  seconds to wait for readiness (default 30)
#
# The PostgreSQL cluster has one role, `postgres`, a superuser, with trust authentication on
# loopback only; the database `kandev_test` exists. Tests may create more databases.
set -euo pipefail

DIR=${KANDEV_SERVICES_DIR:-/tmp/kandev-ci-services}
PG_PORT=${KANDEV_CI_PG_PORT:-55432}
REDIS_PORT=${KANDEV_CI_REDIS_PORT:-56379}
TIMEOUT=${KANDEV_SERVICES_TIMEOUT:-30}
HOST=127.0.0.1
PG_ROLE=postgres
PG_DB=kandev_test

PG_DATA=$DIR/pg/data
PG_SOCK=$DIR/pg/sock
PG_LOG=$DIR/pg/postgres.log
REDIS_DIR=$DIR/redis
REDIS_PID=$REDIS_DIR/redis.pid
REDIS_LOG=$REDIS_DIR/redis.log

log() { echo "services: $*" >&2; }
die() { echo "services: error: $*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

APT_UPDATED=0
apt_install() {
    is_root || die "$* is missing and installing it needs root (apt-get install -y $*)"
    command -v apt-get >/dev/null 2>&1 || die "$* is missing and apt-get is not available"
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        APT_UPDATED=1
    fi
    log "apt-get install -y $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# --- PostgreSQL binaries -------------------------------------------------------------------

PG_BIN=
find_pg_bin() {
    local d
    # Highest installed Debian version first, then whatever is on PATH.
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5,5 -rn); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then PG_BIN=$d; return 0; fi
    done
    if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
        PG_BIN=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
        [ -x "$PG_BIN/initdb" ] && return 0
    fi
    return 1
}

ensure_pg_installed() {
    find_pg_bin && return 0
    apt_install postgresql
    find_pg_bin || die "PostgreSQL binaries not found after installing the postgresql package"
}

ensure_redis_installed() {
    command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 && return 0
    apt_install redis-server redis-tools
    command -v redis-server >/dev/null 2>&1 || die "redis-server not found after installing it"
}

# --- running as the PostgreSQL OS user -----------------------------------------------------

PG_OS_USER=
pick_pg_os_user() {
    if ! is_root; then PG_OS_USER=$(id -un); return; fi
    if [ -n "${KANDEV_CI_PG_OS_USER:-}" ]; then
        PG_OS_USER=$KANDEV_CI_PG_OS_USER
    elif id postgres >/dev/null 2>&1; then
        PG_OS_USER=postgres
    else
        PG_OS_USER=kandevci
    fi
    if ! id "$PG_OS_USER" >/dev/null 2>&1; then
        log "creating OS user $PG_OS_USER"
        useradd --system --no-create-home --home-dir "$DIR" --shell /usr/sbin/nologin "$PG_OS_USER" \
            || die "could not create OS user $PG_OS_USER"
    fi
}

as_pg() {
    if is_root; then
        if command -v runuser >/dev/null 2>&1; then
            runuser -u "$PG_OS_USER" -- "$@"
        else
            su -s /bin/sh "$PG_OS_USER" -c "$(printf '%q ' "$@")"
        fi
    else
        "$@"
    fi
}

pg_ready() { "$PG_BIN/pg_isready" -q -h "$HOST" -p "$PG_PORT" -U "$PG_ROLE" -d postgres >/dev/null 2>&1; }
redis_ready() { [ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]; }
psql_pg() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PG_PORT" -U "$PG_ROLE" "$@"; }

port_busy() {
    # true when something already listens on $1 (bash /dev/tcp; no extra tools needed)
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

wait_for() {
    local what=$1 check=$2 deadline=$((SECONDS + TIMEOUT))
    until "$check"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "$what not ready after ${TIMEOUT}s"
            return 1
        fi
        sleep 0.2
    done
}

# --- start / stop --------------------------------------------------------------------------

start_pg() {
    ensure_pg_installed
    pick_pg_os_user
    mkdir -p "$DIR/pg"
    chmod 755 "$DIR" "$DIR/pg"
    if is_root; then chown "$PG_OS_USER" "$DIR/pg"; fi
    as_pg test -w "$DIR/pg" || die "$PG_OS_USER cannot write $DIR/pg (set KANDEV_SERVICES_DIR to a folder it can reach)"

    if pg_ready; then
        log "PostgreSQL already answers on $HOST:$PG_PORT"
    else
        local major
        major=$("$PG_BIN/postgres" --version | sed -E 's/.* ([0-9]+)(\.[0-9]+)*.*/\1/')
        if [ -f "$PG_DATA/PG_VERSION" ] && [ "$(cat "$PG_DATA/PG_VERSION")" != "$major" ]; then
            log "data in $PG_DATA is from PostgreSQL $(cat "$PG_DATA/PG_VERSION"), binaries are $major: starting over"
            rm -rf "$PG_DATA"
        fi
        if [ ! -f "$PG_DATA/PG_VERSION" ]; then
            log "initdb ($PG_BIN) into $PG_DATA as OS user $PG_OS_USER"
            rm -rf "$PG_DATA"
            as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U "$PG_ROLE" --auth=trust --no-locale -E UTF8 \
                >"$DIR/pg/initdb.log" 2>&1 || { cat "$DIR/pg/initdb.log" >&2; die "initdb failed"; }
            # Loopback only, trust auth (no password), no unix socket in /var/run.
            as_pg sh -c "cat > '$PG_DATA/pg_hba.conf'" <<EOF
local   all   all                 trust
host    all   all   127.0.0.1/32  trust
host    all   all   ::1/128       trust
EOF
        fi
        port_busy "$PG_PORT" && die "port $PG_PORT is taken by something that is not our PostgreSQL"
        as_pg mkdir -p "$PG_SOCK"
        # Throwaway data: durability off for speed.
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$TIMEOUT" start -o \
            "-c listen_addresses=$HOST -p $PG_PORT -k $PG_SOCK -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            >/dev/null || { tail -n 30 "$PG_LOG" >&2 || true; die "PostgreSQL did not start (log: $PG_LOG)"; }
    fi
    wait_for PostgreSQL pg_ready || { tail -n 30 "$PG_LOG" >&2 || true; die "PostgreSQL is not ready"; }
    if [ -z "$(psql_pg -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]; then
        psql_pg -d postgres -c "CREATE DATABASE $PG_DB" >/dev/null
    fi
    log "PostgreSQL ready on $HOST:$PG_PORT (role $PG_ROLE, database $PG_DB)"
}

start_redis() {
    ensure_redis_installed
    mkdir -p "$REDIS_DIR"
    if redis_ready; then
        log "Redis already answers on $HOST:$REDIS_PORT"
    else
        port_busy "$REDIS_PORT" && die "port $REDIS_PORT is taken by something that is not Redis"
        redis-server --bind "$HOST" --port "$REDIS_PORT" --dir "$REDIS_DIR" \
            --daemonize yes --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" \
            --save '' --appendonly no --protected-mode yes \
            || { tail -n 30 "$REDIS_LOG" >&2 || true; die "redis-server did not start"; }
    fi
    wait_for Redis redis_ready || { tail -n 30 "$REDIS_LOG" >&2 || true; die "Redis is not ready (log: $REDIS_LOG)"; }
    log "Redis ready on $HOST:$REDIS_PORT"
}

stop_pg() {
    if [ ! -f "$PG_DATA/postmaster.pid" ]; then log "PostgreSQL not running"; return 0; fi
    find_pg_bin || { log "PostgreSQL binaries not found; cannot stop"; return 1; }
    pick_pg_os_user
    if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -w -t "$TIMEOUT" -m fast stop >/dev/null 2>&1; then
        log "PostgreSQL stopped"
    else
        log "PostgreSQL was not running"
    fi
}

stop_redis() {
    if redis_ready; then
        redis-cli -h "$HOST" -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
        local deadline=$((SECONDS + TIMEOUT))
        while port_busy "$REDIS_PORT"; do
            [ "$SECONDS" -ge "$deadline" ] && { log "Redis still listening after ${TIMEOUT}s"; return 1; }
            sleep 0.2
        done
        rm -f "$REDIS_PID"
        log "Redis stopped"
    elif [ -f "$REDIS_PID" ]; then
        # Not answering but a pid file is left: end that process if it is still ours.
        local pid
        pid=$(cat "$REDIS_PID" 2>/dev/null || true)
        if [ -n "$pid" ] && [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = "redis-server" ]; then
            kill "$pid" 2>/dev/null || true
        fi
        rm -f "$REDIS_PID"
        log "Redis stopped"
    else
        log "Redis not running"
    fi
}

print_env() {
    echo "export KANDEV_TEST_POSTGRES_URL=postgresql+asyncpg://$PG_ROLE@$HOST:$PG_PORT/$PG_DB"
    echo "export KANDEV_TEST_REDIS_URL=redis://$HOST:$REDIS_PORT/0"
}

status() {
    local rc=0
    if find_pg_bin && pg_ready; then echo "postgresql: up ($HOST:$PG_PORT)"; else echo "postgresql: down"; rc=1; fi
    if command -v redis-cli >/dev/null 2>&1 && redis_ready; then echo "redis: up ($HOST:$REDIS_PORT)"; else echo "redis: down"; rc=1; fi
    return $rc
}

case "${1:-}" in
    start)
        mkdir -p "$DIR"
        start_pg
        start_redis
        ;;
    stop)
        rc=0
        stop_redis || rc=1
        stop_pg || rc=1
        exit $rc
        ;;
    status) status ;;
    env) print_env ;;
    *)
        echo "usage: $0 start|stop|status|env" >&2
        exit 2
        ;;
esac
