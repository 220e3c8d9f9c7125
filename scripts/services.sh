#!/usr/bin/env bash
# An embedded PostgreSQL 15 cluster and a Redis server living in one folder.
#
#   scripts/services.sh start DIR PG_PORT REDIS_PORT   initdb if needed, start both, wait
#   scripts/services.sh stop DIR                       stop both (fine if not running)
#   scripts/services.sh pg-start|pg-stop|pg-restart DIR
#   scripts/services.sh redis-start|redis-stop DIR
#   scripts/services.sh status DIR
#
# Both listen on 127.0.0.1 only; PostgreSQL's superuser is `postgres` with trust auth (no
# password), its unix socket is in DIR/pg/run. The ports given to `start` are kept in
# DIR/ports for the other commands. CMS_PG_FAST=1 turns fsync off (tests: the data is
# thrown away). Layout:
#   DIR/ports  DIR/pg/data  DIR/pg/run  DIR/pg.log  DIR/redis/  DIR/redis.pid  DIR/redis.log
set -euo pipefail

die() { echo "services.sh: $*" >&2; exit 1; }

# pg_bindir, as_pg
# shellcheck source=scripts/pg-bin.sh
. "$(dirname "$0")/pg-bin.sh"

# The postgres user must be able to reach DIR: give search (x, not read) permission on any
# ancestor that lacks it, e.g. /root when DIR is in a checkout under it.
make_traversable() {
    local dir=$1 p="" part
    [ "$(id -u)" = 0 ] || return 0
    runuser -u postgres -- test -x "$dir" && return 0
    IFS=/ read -ra parts <<<"${dir#/}"
    for part in "${parts[@]}"; do
        p="$p/$part"
        if ! runuser -u postgres -- test -x "$p"; then
            echo "services.sh: chmod o+x $p (so that the postgres user can reach $dir)" >&2
            chmod o+x "$p"
        fi
    done
}

load_ports() {
    [ -f "$DIR/ports" ] || die "$DIR/ports missing: run 'services.sh start DIR PG_PORT REDIS_PORT' first"
    # shellcheck disable=SC1091
    . "$DIR/ports"
}

pg_running() {
    [ -f "$DIR/pg/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg/data" status >/dev/null 2>&1
}

pg_init() {
    [ -f "$DIR/pg/data/PG_VERSION" ] && return 0
    mkdir -p "$DIR/pg/data" "$DIR/pg/run"
    touch "$DIR/pg.log"
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres: "$DIR/pg" "$DIR/pg.log"
    fi
    chmod 700 "$DIR/pg/data"
    local sync=()
    [ "${CMS_PG_FAST:-0}" = 1 ] && sync=(--no-sync)
    as_pg "$PG_BIN/initdb" -D "$DIR/pg/data" -A trust -U postgres -E UTF8 --locale=C \
        "${sync[@]}" >"$DIR/pg/initdb.log" 2>&1 \
        || { cat "$DIR/pg/initdb.log" >&2; die "initdb failed"; }
    echo "include_if_exists = 'cms.conf'" >>"$DIR/pg/data/postgresql.conf"
}

# Rewritten at every start so that a changed port or CMS_PG_FAST takes effect.
pg_write_conf() {
    {
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $PG_PORT"
        echo "unix_socket_directories = '$DIR/pg/run'"
        echo "max_connections = 200"
        echo "logging_collector = off"
        echo "log_line_prefix = '%m [%p] %d '"
        if [ "${CMS_PG_FAST:-0}" = 1 ]; then
            echo "fsync = off"
            echo "synchronous_commit = off"
            echo "full_page_writes = off"
        fi
    } >"$DIR/pg/data/cms.conf"
    [ "$(id -u)" = 0 ] && chown postgres: "$DIR/pg/data/cms.conf"
    return 0
}

pg_start() {
    pg_init
    if pg_running; then
        return 0
    fi
    pg_write_conf
    as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -l "$DIR/pg.log" -w -t 60 start >/dev/null \
        || { tail -n 30 "$DIR/pg.log" >&2; die "PostgreSQL did not start (log: $DIR/pg.log)"; }
    local i
    for i in $(seq 1 100); do
        pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -U postgres && return 0
        sleep 0.1
    done
    die "PostgreSQL on 127.0.0.1:$PG_PORT is not accepting connections (log: $DIR/pg.log)"
}

pg_stop() {
    [ -d "$DIR/pg/data" ] || return 0
    pg_running || return 0
    # fast: roll back open transactions and disconnect clients now, as a crash-free
    # restart of the server would look to the nginx workers.
    as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -m fast -w -t 60 stop >/dev/null
}

redis_pid() {
    local pid
    [ -f "$DIR/redis.pid" ] || return 1
    pid=$(cat "$DIR/redis.pid")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

redis_ping() {
    [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

redis_start() {
    mkdir -p "$DIR/redis"
    if redis_pid >/dev/null && redis_ping; then
        return 0
    fi
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$DIR/redis" --save '' \
        --appendonly no --daemonize yes --pidfile "$DIR/redis.pid" \
        --logfile "$DIR/redis.log" \
        || die "redis-server did not start (log: $DIR/redis.log)"
    local i
    for i in $(seq 1 100); do
        redis_ping && return 0
        sleep 0.1
    done
    tail -n 20 "$DIR/redis.log" >&2 || true
    die "Redis on 127.0.0.1:$REDIS_PORT is not answering PING (log: $DIR/redis.log)"
}

redis_stop() {
    local pid i
    pid=$(redis_pid) || { rm -f "$DIR/redis.pid"; return 0; }
    kill -TERM "$pid"
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$DIR/redis.pid"; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$DIR/redis.pid"
}

cmd=${1:-}
[ $# -ge 2 ] || die "usage: services.sh start DIR PG_PORT REDIS_PORT | stop|status|pg-start|pg-stop|pg-restart|redis-start|redis-stop DIR"
if [ "$cmd" = start ]; then
    mkdir -p "$2"
elif [ ! -d "$2" ]; then
    [ "$cmd" = stop ] && exit 0
    die "$2: no such folder"
fi
DIR=$(cd "$2" && pwd)
PG_BIN=$(pg_bindir)
export PATH="$PG_BIN:$PATH"

case "$cmd" in
    start)
        [ $# -eq 4 ] || die "usage: services.sh start DIR PG_PORT REDIS_PORT"
        PG_PORT=$3 REDIS_PORT=$4
        # Already running on other ports: refuse rather than pretend the new ports work.
        if [ -f "$DIR/ports" ]; then
            new_pg=$PG_PORT new_redis=$REDIS_PORT
            load_ports
            if { pg_running || redis_pid >/dev/null; } &&
               [ "$PG_PORT:$REDIS_PORT" != "$new_pg:$new_redis" ]; then
                die "already running in $DIR on ports $PG_PORT/$REDIS_PORT; stop it first"
            fi
            PG_PORT=$new_pg REDIS_PORT=$new_redis
        fi
        printf 'PG_PORT=%s\nREDIS_PORT=%s\n' "$PG_PORT" "$REDIS_PORT" >"$DIR/ports"
        make_traversable "$DIR"
        pg_start
        redis_start
        ;;
    stop)
        [ -f "$DIR/ports" ] || exit 0
        load_ports
        redis_stop
        pg_stop
        ;;
    pg-start)    load_ports; pg_start ;;
    pg-stop)     load_ports; pg_stop ;;
    pg-restart)  load_ports; pg_stop; pg_start ;;
    redis-start) load_ports; redis_start ;;
    redis-stop)  load_ports; redis_stop ;;
    status)
        load_ports
        if pg_running; then echo "postgres: running on 127.0.0.1:$PG_PORT"; else echo "postgres: stopped"; fi
        if redis_pid >/dev/null; then echo "redis: running on 127.0.0.1:$REDIS_PORT"; else echo "redis: stopped"; fi
        ;;
    *) die "unknown command '$cmd'" ;;
esac
