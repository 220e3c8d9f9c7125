#!/usr/bin/env bash
# A fleet on one machine: N nginx hosts with the module behind a round-robin nginx, over one
# PostgreSQL primary with one streaming replica, one Redis and one local S3 bucket.
#
#   scripts/fleet.sh start   start it all; prints the ports, the front URL and demo.env
#   scripts/fleet.sh stop    stop all of it, also what a failed start left running
#   (make fleet / make fleet-stop build the module first / call this)
#
# Environment (defaults in brackets), all ports on 127.0.0.1:
#   FLEET_HOSTS [3]   FLEET_PORT [8081]   the hosts listen on FLEET_PORT, FLEET_PORT+1, ...
#   FLEET_FRONT_PORT [8080]   the round-robin nginx in front (plain nginx, no module)
#   FLEET_PG_PORT [54330]   FLEET_PG_REPLICA_PORT [54331]   FLEET_REDIS_PORT [63791]
#   FLEET_S3_PORT [9001]   FLEET_VAR [var/fleet]
#   FLEET_REPLICA_DIRECTIVE [1]   1: each host's config gets
#                    `cms_postgres_replica "<the replica's conninfo>";` right after
#                    cms_postgres; 0: not (a module without that directive)
#   CMS_MODULE, CMS_ASAN, CMS_ADMIN, CMS_DEMO [1], CMS_PG_FAST: as scripts/cms.sh and
#                    scripts/services.sh take them
#
# FLEET_VAR holds: ports, pg/, redis/ (the primary and Redis: scripts/services.sh), s3/
# (the bucket: scripts/cms.sh's local S3 server), replica/ (data/, run/, postgres.log),
# hostN/ (each host's CMS_VAR: nginx.conf, nginx/logs/, demo.env), front/ (nginx.conf,
# logs/; its access log names the host that answered, as does the X-Fleet-Upstream
# response header) and demo.env (the demo's keys, CMS_URL the front).
#
# The replica is pg_basebackup -R -X stream of the primary through the replication slot
# fleet_replica, made once (kept across stop/start), with its own port and socket folder.
# Each host is `scripts/cms.sh start` with its own CMS_VAR and CMS_PORT, CMS_STORAGE=s3
# and CMS_SERVICES_VAR=FLEET_VAR (the primary, Redis and S3 server above, shared). Host 1
# creates the database cms, migrates it with cms-admin (CMS_MIGRATE=cms-admin), makes the
# secret, seeds the demo and starts the S3 server; the other hosts take its secret
# (CMS_SECRET_FILE) and its seed.env (so the demo is seeded once) and skip migrations
# (CMS_MIGRATE=none). Each host's cms.sh output is in hostN/start.log (mode 0600).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
FLEET_HOSTS=${FLEET_HOSTS:-3}
FLEET_PORT=${FLEET_PORT:-8081}
FLEET_FRONT_PORT=${FLEET_FRONT_PORT:-8080}
FLEET_PG_PORT=${FLEET_PG_PORT:-54330}
FLEET_PG_REPLICA_PORT=${FLEET_PG_REPLICA_PORT:-54331}
FLEET_REDIS_PORT=${FLEET_REDIS_PORT:-63791}
FLEET_S3_PORT=${FLEET_S3_PORT:-9001}
FLEET_REPLICA_DIRECTIVE=${FLEET_REPLICA_DIRECTIVE:-1}
fv=$(realpath -m "${FLEET_VAR:-$root/var/fleet}")   # absolute: nginx prefixes, configs
front=$fv/front
replica=$fv/replica
slot=fleet_replica
cms=$root/scripts/cms.sh
services=$root/scripts/services.sh

say() { echo "fleet: $*" >&2; }
die() { say "$*"; exit 1; }

# pg_bindir, as_pg
# shellcheck source=scripts/pg-bin.sh
. "$root/scripts/pg-bin.sh"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

conninfo() { echo "hostaddr=127.0.0.1 port=$1 dbname=cms user=postgres"; }

check_settings() {
    local v
    for v in FLEET_HOSTS FLEET_PORT FLEET_FRONT_PORT FLEET_PG_PORT FLEET_PG_REPLICA_PORT \
             FLEET_REDIS_PORT FLEET_S3_PORT; do
        [[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: a number"
    done
    [ "$FLEET_HOSTS" -ge 1 ] || die "FLEET_HOSTS=$FLEET_HOSTS: 1 or more"
    case $FLEET_REPLICA_DIRECTIVE in 0|1) ;; *) die "FLEET_REPLICA_DIRECTIVE: 0 or 1" ;; esac
}

# Every port free before anything starts: a port in use is usually a fleet still running.
check_ports() {
    local p i ports=()
    for ((i = 0; i < FLEET_HOSTS; i++)); do
        ports+=($((FLEET_PORT + i)))
    done
    for p in "$FLEET_FRONT_PORT" "${ports[@]}" "$FLEET_PG_PORT" "$FLEET_PG_REPLICA_PORT" \
             "$FLEET_REDIS_PORT" "$FLEET_S3_PORT"; do
        port_open "$p" && die "127.0.0.1:$p is in use (a fleet still running: make fleet-stop)"
    done
    return 0
}

# --- the replica ------------------------------------------------------------------------

# the primary's cms.conf (services.sh's settings, as they are now) with the replica's own
# port and socket folder, in place of the copy the base backup took
replica_conf() {
    sed -e "s|^port = .*|port = $FLEET_PG_REPLICA_PORT|" \
        -e "s|^unix_socket_directories = .*|unix_socket_directories = '$replica/run'|" \
        "$fv/pg/data/cms.conf" >"$replica/data/cms.conf"
    echo "hot_standby = on" >>"$replica/data/cms.conf"
    [ "$(id -u)" = 0 ] && chown postgres: "$replica/data/cms.conf"
    return 0
}

replica_make() {
    [ -f "$replica/data/PG_VERSION" ] && return 0
    rm -rf "$replica"
    mkdir -p "$replica/run"
    [ "$(id -u)" = 0 ] && chown -R postgres: "$replica"
    # a slot left by an earlier replica (its folder removed) would make -C fail
    psql -X -q -At -h 127.0.0.1 -p "$FLEET_PG_PORT" -U postgres -d postgres -c \
        "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots
          WHERE slot_name = '$slot'" >/dev/null
    as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$FLEET_PG_PORT" -U postgres \
        -D "$replica/data" -R -X stream -C -S "$slot" -c fast \
        || die "pg_basebackup from the primary failed"
}

replica_start() {
    replica_make
    replica_conf
    as_pg "$PG_BIN/pg_ctl" -D "$replica/data" -l "$replica/postgres.log" -w -t 60 start \
        >/dev/null || { tail -n 20 "$replica/postgres.log" >&2; die "the replica did not start"; }
    local i state
    for i in $(seq 1 100); do
        state=$(psql -X -q -At -h 127.0.0.1 -p "$FLEET_PG_REPLICA_PORT" -U postgres \
                     -d postgres -c "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null) || true
        [ "$state" = streaming ] && return 0
        sleep 0.1
    done
    die "the replica does not stream from the primary (log: $replica/postgres.log)"
}

replica_stop() {
    [ -f "$replica/data/postmaster.pid" ] || return 0
    as_pg "$PG_BIN/pg_ctl" -D "$replica/data" -m fast -w -t 60 stop >/dev/null || true
}

# --- the hosts --------------------------------------------------------------------------

host_start() {
    local i=$1 h=$fv/host$1 port=$((FLEET_PORT + $1 - 1)) vars
    mkdir -p "$h"
    # the shared services, not a user's external ones
    vars=(-u CMS_PG_CONNINFO -u CMS_REDIS_ADDR -u CMS_S3_ENDPOINT -u CMS_S3_CREDENTIALS
         CMS_VAR="$h" CMS_SERVICES_VAR="$fv" CMS_PORT="$port" CMS_PG_PORT="$FLEET_PG_PORT"
         CMS_REDIS_PORT="$FLEET_REDIS_PORT" CMS_STORAGE=s3 CMS_S3_PORT="$FLEET_S3_PORT")
    if [ "$FLEET_REPLICA_DIRECTIVE" = 1 ]; then
        vars+=(CMS_PG_REPLICA_CONNINFO="$(conninfo "$FLEET_PG_REPLICA_PORT")")
    fi
    if [ "$i" = 1 ]; then
        vars+=(CMS_MIGRATE=cms-admin)
    else
        vars+=(CMS_MIGRATE=none CMS_SECRET_FILE="${CMS_SECRET_FILE:-$fv/host1/secret.key}")
        if [ -f "$fv/host1/seed.env" ]; then cp -p "$fv/host1/seed.env" "$h/seed.env"; fi
    fi
    # the log has cms.sh's banner, the demo's keys with it: the owner's only
    rm -f "$h/start.log"
    if ! (umask 077; env "${vars[@]}" "$cms" start >"$h/start.log" 2>&1); then
        tail -n 20 "$h/start.log" >&2
        if grep -q 'unknown directive "cms_postgres_replica"' "$h/start.log"; then
            say "this module has no cms_postgres_replica yet: FLEET_REPLICA_DIRECTIVE=0"
        fi
        die "host $i did not start (log: $h/start.log); make fleet-stop stops what started"
    fi
}

# --- the front --------------------------------------------------------------------------

front_conf() {
    local i
    mkdir -p "$front/logs" "$front/temp"
    {
        cat <<EOF
# the fleet's round-robin front (scripts/fleet.sh writes it at every start)
worker_processes 1;
error_log $front/logs/error.log info;
pid $front/logs/nginx.pid;
events { worker_connections 1024; }
http {
    log_format fleet '\$time_iso8601 "\$request" \$status upstream=\$upstream_addr'
                     ' \$request_time';
    access_log $front/logs/access.log fleet;
    client_body_temp_path $front/temp/body;
    proxy_temp_path $front/temp/proxy;
    fastcgi_temp_path $front/temp/fastcgi;
    uwsgi_temp_path $front/temp/uwsgi;
    scgi_temp_path $front/temp/scgi;
    upstream cms_fleet {
EOF
        for ((i = 0; i < FLEET_HOSTS; i++)); do
            echo "        server 127.0.0.1:$((FLEET_PORT + i));"
        done
        cat <<EOF
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$FLEET_FRONT_PORT;
        server_tokens off;
        client_max_body_size 0;          # the hosts decide
        location / {
            proxy_pass http://cms_fleet;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_request_buffering off;
            proxy_buffering off;
            add_header X-Fleet-Upstream \$upstream_addr always;
        }
    }
}
EOF
    } >"$front/nginx.conf"
}

front_pid() {
    local pid
    pid=$(cat "$front/logs/nginx.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

front_start() {
    front_conf
    nginx -q -t -p "$front/" -c "$front/nginx.conf" || die "nginx -t failed for $front/nginx.conf"
    nginx -p "$front/" -c "$front/nginx.conf" || die "the front nginx did not start"
    local i
    for i in $(seq 1 100); do
        port_open "$FLEET_FRONT_PORT" && return 0
        sleep 0.1
    done
    die "the front does not accept connections on port $FLEET_FRONT_PORT"
}

front_stop() {
    local pid i
    pid=$(front_pid) || return 0
    kill -QUIT "$pid" 2>/dev/null || return 0
    for i in $(seq 1 150); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -TERM "$pid" 2>/dev/null || true
}

# --- start, stop --------------------------------------------------------------------------

# host 1's demo.env with the front as CMS_URL, and the replica's URL
write_demo_env() {
    (
        umask 077
        printf 'CMS_URL=%q\n' "http://127.0.0.1:$FLEET_FRONT_PORT"
        printf 'CMS_REPLICA_DATABASE_URL=%q\n' \
            "postgresql://postgres@127.0.0.1:$FLEET_PG_REPLICA_PORT/cms"
        grep -v '^CMS_URL=' "$fv/host1/demo.env"
    ) >"$fv/demo.env.tmp"
    chmod 600 "$fv/demo.env.tmp"
    mv "$fv/demo.env.tmp" "$fv/demo.env"
}

wait_ready() {
    local i
    for i in $(seq 1 100); do
        curl -fsS -o /dev/null "http://127.0.0.1:$FLEET_FRONT_PORT/v1/health/ready" 2>/dev/null \
            && return 0
        sleep 0.1
    done
    die "http://127.0.0.1:$FLEET_FRONT_PORT/v1/health/ready does not answer 200"
}

row() { say "$(printf '  %-8s %s' "$1" "$2")"; }

banner() {
    local i
    say "started $FLEET_HOSTS hosts over one primary with one streaming replica:"
    row front "http://127.0.0.1:$FLEET_FRONT_PORT  (round robin; logs in $front/logs/)"
    for ((i = 1; i <= FLEET_HOSTS; i++)); do
        row "host $i" "http://127.0.0.1:$((FLEET_PORT + i - 1))  (logs in $fv/host$i/nginx/logs/)"
    done
    row primary "$(conninfo "$FLEET_PG_PORT")"
    row replica "$(conninfo "$FLEET_PG_REPLICA_PORT")"
    if [ "$FLEET_REPLICA_DIRECTIVE" = 1 ]; then
        row "" "(cms_postgres_replica in each $fv/hostN/nginx.conf)"
    else
        row "" "(FLEET_REPLICA_DIRECTIVE=0: not in the hosts' configs)"
    fi
    row redis "127.0.0.1:$FLEET_REDIS_PORT"
    row s3 "http://127.0.0.1:$FLEET_S3_PORT  (bucket media, data in $fv/s3/)"
    say "demo environment: $fv/demo.env   (. $fv/demo.env; curl \"\$CMS_URL/v1/me\" ...)"
    say "make fleet-stop (or scripts/fleet.sh stop) stops it all"
}

start() {
    check_settings
    check_ports
    mkdir -p "$fv"
    say "primary and Redis (scripts/services.sh, $fv)"
    "$services" start "$fv" "$FLEET_PG_PORT" "$FLEET_REDIS_PORT"
    say "streaming replica on port $FLEET_PG_REPLICA_PORT ($replica)"
    replica_start
    local i
    for ((i = 1; i <= FLEET_HOSTS; i++)); do
        say "host $i on port $((FLEET_PORT + i - 1)) (scripts/cms.sh, $fv/host$i)"
        host_start "$i"
    done
    say "front on port $FLEET_FRONT_PORT"
    front_start
    wait_ready
    if [ -f "$fv/host1/demo.env" ]; then write_demo_env; fi
    banner
}

stop() {
    [ -d "$fv" ] || { say "nothing to stop ($fv does not exist)"; return 0; }
    front_stop
    local h
    for h in "$fv"/host*/; do
        [ -d "$h" ] || continue
        # the host's nginx only (its CMS_VAR has no services of its own); all at once
        env -u CMS_SERVICES_VAR CMS_VAR="${h%/}" "$cms" stop &
    done
    wait
    replica_stop
    # the shared S3 server, primary and Redis (fv has no nginx of cms.sh's)
    CMS_VAR="$fv" CMS_SERVICES_VAR="$fv" "$cms" stop
    say "stopped (data kept in $fv; rm -rf it for a fresh fleet)"
}

PG_BIN=$(pg_bindir)
case "$cmd" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: scripts/fleet.sh start|stop" >&2; exit 2 ;;
esac
