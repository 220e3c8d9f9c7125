#!/usr/bin/env bash
# Run the CMS locally: PostgreSQL + Redis (embedded, under var/) and nginx with the module.
#
#   scripts/cms.sh run     everything in the foreground; Ctrl-C stops nginx, PG and Redis
#   scripts/cms.sh start   the same, nginx daemonized (pid in var/nginx/nginx.pid); returns
#   scripts/cms.sh stop    stop nginx, PostgreSQL and Redis
#   (make run / make start / make stop build the module first and call this)
#
# Environment (defaults in brackets):
#   CMS_PORT [8080]  CMS_PG_PORT [54320]  CMS_REDIS_PORT [63790]   ports on 127.0.0.1
#   CMS_MODULE [build/ngx_http_cms_module.so]   CMS_ASAN [0] (1: preload the ASan runtime)
#   CMS_ADMIN [cms-admin next to CMS_MODULE]   the demo seed's and CMS_MIGRATE=cms-admin's tool
#   CMS_DEMO [1 with the embedded PostgreSQL, 0 with CMS_PG_CONNINFO]   1: seed the demo
#                    account (known password) and keys, keep the development manifests
#                    folder; 0: seed nothing, no keys in demo.env or on the terminal, and
#                    cms_extensions_manifests commented out (file: manifests refused).
#                    CMS_DEMO=1 with an external database is refused.
#   CMS_MIGRATE [psql]   how the migrations are applied: psql (scripts/migrate.sh),
#                    cms-admin (CMS_ADMIN migrate; both under one advisory lock: several hosts
#                    may start at once) or none (applied elsewhere; readiness waits)
#   CMS_VAR [var/]           data, logs, the rendered config, the secret, demo.env
#   CMS_SERVICES_VAR [CMS_VAR]   the embedded PostgreSQL and Redis (scripts/services.sh's
#                    folder) and the local S3 server (its s3/): several hosts, each with
#                    a CMS_VAR of its own, naming one folder and the same ports share them
#                    (the first starts them; `stop` stops them: scripts/fleet.sh)
#   CMS_LISTEN [127.0.0.1]   address nginx listens on (the Dockerfile sets 0.0.0.0)
#   CMS_MANIFESTS [examples/extensions]   development manifests folder (file:NAME),
#                    CMS_DEMO=1 only
#   CMS_CA_CERTS [/etc/ssl/certs/ca-certificates.crt]   CAs for https:// manifests
#   External services instead of the embedded ones (e.g. in a container):
#   CMS_PG_CONNINFO  libpq conninfo, e.g. "host=db port=5432 dbname=cms user=cms password=..."
#                    (a host name is resolved by nginx's resolver, never by libpq in nginx)
#   CMS_PG_REPLICA_CONNINFO   a streaming replica's conninfo (embedded or external
#                    primary): the line `cms_postgres_replica "...";` goes right after
#                    the cms_postgres directive of the rendered config (unset: none)
#   CMS_REDIS_ADDR   name:port, ip:port or unix:/path
#   CMS_RESOLVER     [the first nameserver of /etc/resolv.conf] the DNS server nginx's
#                    `resolver` asks for those names (none: no resolver line)
#   CMS_SECRET_FILE  an existing secret (default: var/secret.key, 32 random bytes, hex,
#                    made once)
#   CMS_STORAGE [folder]   where uploads go: folder (var/storage) or s3 (a bucket,
#                    docs/object-storage.md): with CMS_S3_ENDPOINT, CMS_S3_BUCKET [media],
#                    CMS_S3_REGION [us-east-1] and CMS_S3_CREDENTIALS (an AWS-format
#                    file) that bucket; without an endpoint, a local S3-compatible server
#                    (tools/node/s3-server.js, signatures checked, data in var/s3/, that
#                    is CMS_SERVICES_VAR/s3/) on CMS_S3_PORT [9000], its key pair made once
#                    in var/s3/credentials
#
# What start/run do: start the embedded services (unless external), create database `cms`
# if missing, apply sql/ migrations, make the secret, seed the demo once (CMS_DEMO=1),
# write var/demo.env, render conf/nginx.conf.in into var/nginx.conf, start nginx.
# var/demo.env always has CMS_URL, CMS_DATABASE_URL and CMS_REDIS_URL, and the demo's
# keys only with CMS_DEMO=1; it and var/seed.env are written mode 0600.
#
# The demo seed (CMS_DEMO=1): scripts/seed-demo.sh, when present, runs once per var/ (delete
# var/seed.env to run it again; it also runs again when var/seed.env lacks one of
# seed_vars, printed only by a later seed-demo.sh) with CMS_PG_CONNINFO, CMS_DATABASE_URL,
# CMS_REDIS_URL, CMS_REDIS_ADDR, CMS_SECRET_FILE, CMS_URL, CMS_ADMIN (cms-admin next to the
# module) in its environment; its standard output (shell assignments) is kept in
# var/seed.env and appended to var/demo.env.
#
# conf/nginx.conf.in placeholders: @MODULE@ @PREFIX@ @PORT@ @PG_CONNINFO@ @REDIS_ADDR@
# @SECRET@ @STORAGE@ (the folder, or "s3 endpoint=... stage=..."), @RESOLVER@ (a `resolver` line, or a comment when there is no DNS
# server to name), @LISTEN@ ("$CMS_LISTEN:$CMS_PORT", for `listen @LISTEN@;` so that a
# container can listen on 0.0.0.0), @MANIFESTS@ (absolute $CMS_MANIFESTS, for
# cms_extensions_manifests; with CMS_DEMO=0 that directive's whole line becomes a comment)
# and @CA_CERTS@ ($CMS_CA_CERTS, for the manifest fetch location's
# proxy_ssl_trusted_certificate). nginx runs with -p var/nginx/; unless the
# template sets `pid` itself, the pid file is var/nginx/nginx.pid (given with -g).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
CMS_PORT=${CMS_PORT:-8080}
CMS_PG_PORT=${CMS_PG_PORT:-54320}
CMS_REDIS_PORT=${CMS_REDIS_PORT:-63790}
CMS_LISTEN=${CMS_LISTEN:-127.0.0.1}
VAR=${CMS_VAR:-$root/var}
SVC=${CMS_SERVICES_VAR:-$VAR}     # the embedded PostgreSQL, Redis and local S3 server
module=${CMS_MODULE:-$root/build/ngx_http_cms_module.so}
manifests=${CMS_MANIFESTS:-$root/examples/extensions}
ca_certs=${CMS_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
# what var/seed.env must hold; one missing means it came from an older seed-demo.sh
seed_vars=(CMS_ADMIN_KEY)
admin=${CMS_ADMIN:-$(dirname "$module")/cms-admin}
nginx_bin=${CMS_NGINX_BINARY:-/usr/sbin/nginx}
template=$root/conf/nginx.conf.in
prefix=$VAR/nginx
conf=$VAR/nginx.conf

say() { echo "cms: $*" >&2; }
die() { say "$*"; exit 1; }

embedded_pg() { [ -z "${CMS_PG_CONNINFO:-}" ]; }
embedded_redis() { [ -z "${CMS_REDIS_ADDR:-}" ]; }

# The demo (a known password, keys on the terminal) only into the embedded database.
if [ -z "${CMS_DEMO:-}" ]; then
    if embedded_pg; then CMS_DEMO=1; else CMS_DEMO=0; fi
fi

check_demo() {
    case $CMS_DEMO in
        0|1) ;;
        *) die "CMS_DEMO=$CMS_DEMO: 1 (the demo) or 0 (none)" ;;
    esac
    if [ "$CMS_DEMO" = 1 ] && ! embedded_pg; then
        die "CMS_DEMO=1 with an external database (CMS_PG_CONNINFO) is refused: the demo" \
            "seeds an account with a known password. Unset CMS_DEMO or set CMS_DEMO=0."
    fi
}

pg_conninfo() {
    if embedded_pg; then
        echo "hostaddr=127.0.0.1 port=$CMS_PG_PORT dbname=cms user=postgres"
    else
        echo "$CMS_PG_CONNINFO"
    fi
}

redis_addr() {
    if embedded_redis; then echo "127.0.0.1:$CMS_REDIS_PORT"; else echo "$CMS_REDIS_ADDR"; fi
}

# nginx's `resolver` line: CMS_RESOLVER, else /etc/resolv.conf's first nameserver
resolver_line() {
    local ns=${CMS_RESOLVER:-}
    if [ -z "$ns" ] && [ -r /etc/resolv.conf ]; then
        ns=$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf)
    fi
    if [ -z "$ns" ]; then
        echo "# no resolver: no CMS_RESOLVER and no nameserver in /etc/resolv.conf"
        return
    fi
    case $ns in *:*) [ "${ns#[}" = "$ns" ] && ns="[$ns]" ;; esac   # IPv6 in brackets
    echo "resolver $ns valid=10s ipv6=off;"
}

database_url() {
    if embedded_pg; then
        echo "postgresql://postgres@127.0.0.1:$CMS_PG_PORT/cms"
    else
        echo "$CMS_PG_CONNINFO"                 # psql and libpq take either form
    fi
}

# -g options: the pid file unless the template sets one, plus any extra directives.
nginx_globals() {
    local g=""
    grep -Eq '^[[:space:]]*pid[[:space:]]' "$conf" 2>/dev/null || g="pid $prefix/nginx.pid;"
    echo "$g${1:+ $1}"
}

nginx_pidfile() {
    local p
    p=$(sed -nE 's/^[[:space:]]*pid[[:space:]]+([^;]+);.*/\1/p' "$conf" 2>/dev/null | head -n 1)
    if [ -z "$p" ]; then echo "$prefix/nginx.pid"
    elif [[ $p == /* ]]; then echo "$p"
    else echo "$prefix/$p"; fi
}

nginx_pid() {
    local f pid
    f=$(nginx_pidfile)
    [ -f "$f" ] || return 1
    pid=$(cat "$f")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

nginx_env() {
    local env=()
    if [ "${CMS_ASAN:-0}" = 1 ]; then
        env=(LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
             ASAN_OPTIONS="detect_leaks=0:log_path=stderr"
             UBSAN_OPTIONS="print_stacktrace=1")
    fi
    env "${env[@]}" "$@"
}

sed_escape() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }

render_conf() {
    [ -f "$template" ] || die "$template is missing (the nginx.conf template for make run)"
    local secret=$1 manifests_abs manifests_off=() off
    if [ "$CMS_DEMO" = 0 ]; then
        # development manifests off: the directive's line (an empty value would name the
        # prefix) becomes a comment, and install refuses file: manifests
        off='s|^\([[:space:]]*\)cms_extensions_manifests[[:space:]].*$|'
        off+='\1# cms_extensions_manifests: off (CMS_DEMO=0)|'
        manifests_off=(-e "$off")
    elif grep -q '@MANIFESTS@' "$template"; then
        [ -d "$manifests" ] \
            || die "$manifests (CMS_MANIFESTS, development manifests) is not a folder"
        manifests_abs=$(cd "$manifests" && pwd)
    fi
    if grep -q '@CA_CERTS@' "$template" && [ ! -r "$ca_certs" ]; then
        die "$ca_certs (CMS_CA_CERTS, CAs for https:// manifests) is missing: install" \
            "ca-certificates or set CMS_CA_CERTS"
    fi
    sed "${manifests_off[@]}" \
        -e "s|@MODULE@|$(sed_escape "$module")|g" \
        -e "s|@PREFIX@|$(sed_escape "$prefix")|g" \
        -e "s|@PORT@|$(sed_escape "$CMS_PORT")|g" \
        -e "s|@LISTEN@|$(sed_escape "$CMS_LISTEN:$CMS_PORT")|g" \
        -e "s|@PG_CONNINFO@|$(sed_escape "$(pg_conninfo)")|g" \
        -e "s|@REDIS_ADDR@|$(sed_escape "$(redis_addr)")|g" \
        -e "s|@RESOLVER@|$(sed_escape "$(resolver_line)")|g" \
        -e "s|@SECRET@|$(sed_escape "$secret")|g" \
        -e "s|@STORAGE@|$(sed_escape "$(storage)")|g" \
        -e "s|@MANIFESTS@|$(sed_escape "${manifests_abs:-}")|g" \
        -e "s|@CA_CERTS@|$(sed_escape "$ca_certs")|g" \
        "$template" | replica_line >"$conf.tmp" || die "could not render $conf"
    if grep -n '@[A-Z_]*@' "$conf.tmp" >&2; then
        die "unknown placeholder left in $conf (see above)"
    fi
    mv "$conf.tmp" "$conf"
}

# stdin to stdout, with CMS_PG_REPLICA_CONNINFO's line after the cms_postgres directive
# (which may span lines: up to its ";"), indented as it is; fails when there is none
replica_line() {
    if [ -z "${CMS_PG_REPLICA_CONNINFO:-}" ]; then cat; return; fi
    CMS_REPLICA_LINE="cms_postgres_replica \"$CMS_PG_REPLICA_CONNINFO\";" awk '
        /^[[:space:]]*cms_postgres[[:space:]]/ && !done { inpg = 1; match($0, /^[[:space:]]*/)
                                                          indent = substr($0, 1, RLENGTH) }
        { print }
        inpg && /;/ { print indent ENVIRON["CMS_REPLICA_LINE"]; inpg = 0; done = 1 }
        END { if (!done) print "cms: CMS_PG_REPLICA_CONNINFO: no cms_postgres" \
                               " directive in the template to follow" >"/dev/stderr"
              exit !done }'
}

# cms_storage's value: the folder, or the bucket (CMS_STORAGE=s3)
storage() {
    if [ "${CMS_STORAGE:-folder}" != s3 ]; then
        echo "$VAR/storage"
        return
    fi
    local style=
    [ -n "${CMS_S3_ENDPOINT:-}" ] || style=" path_style=on"
    echo "s3 endpoint=${CMS_S3_ENDPOINT:-http://127.0.0.1:${CMS_S3_PORT:-9000}}" \
         "bucket=${CMS_S3_BUCKET:-media} region=${CMS_S3_REGION:-us-east-1}" \
         "credentials=${CMS_S3_CREDENTIALS:-$SVC/s3/credentials} stage=$VAR/stage$style"
}

# CMS_STORAGE=s3 without an endpoint: the local S3-compatible server, its key pair
# made once (the secret in a file of mode 0600 only)
start_s3() {
    [ "${CMS_STORAGE:-folder}" = s3 ] && [ -z "${CMS_S3_ENDPOINT:-}" ] || return 0
    local dir=$SVC/s3 port=${CMS_S3_PORT:-9000} secret
    mkdir -p "$dir/data"
    if [ ! -f "$dir/credentials" ]; then
        secret=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
        (umask 077; printf '[default]\naws_access_key_id = CMSLOCAL\naws_secret_access_key = %s\n' \
            "$secret" >"$dir/credentials")
    fi
    secret=$(sed -n 's/^aws_secret_access_key = //p' "$dir/credentials")
    if [ -f "$dir/server.pid" ] && kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
        return 0
    fi
    setsid node "$root/tools/node/s3-server.js" --dir "$dir/data" --port "$port" \
        --bucket "${CMS_S3_BUCKET:-media}" --key CMSLOCAL --secret "$secret" \
        >"$dir/server.log" 2>&1 </dev/null &
    echo $! >"$dir/server.pid"
    local i
    for i in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    die "the local S3 server did not start (see $dir/server.log)"
}

stop_s3() {
    local pid
    pid=$(cat "$SVC/s3/server.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    rm -f "$SVC/s3/server.pid"
}

make_secret() {
    local f=${CMS_SECRET_FILE:-$VAR/secret.key}
    if [ ! -s "$f" ]; then
        [ -z "${CMS_SECRET_FILE:-}" ] || die "CMS_SECRET_FILE=$f does not exist"
        (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$f")
        say "made $f"
    fi
    echo "$f"
}

seed_current() {
    local v
    [ -f "$VAR/seed.env" ] || return 1
    for v in "${seed_vars[@]}"; do
        grep -q "^$v=" "$VAR/seed.env" || return 1
    done
}

seed_demo() {
    local seed=$root/scripts/seed-demo.sh
    [ -f "$seed" ] || return 0
    seed_current && return 0
    if [ -f "$VAR/seed.env" ]; then
        say "seeding the demo again: $VAR/seed.env predates ${seed_vars[*]}"
    else
        say "seeding the demo (scripts/seed-demo.sh)"
    fi
    ( umask 077                      # keys: seed.env is the owner's only
      CMS_PG_CONNINFO=$(pg_conninfo) CMS_DATABASE_URL=$(database_url) \
      CMS_REDIS_URL="redis://$(redis_addr)" CMS_REDIS_ADDR=$(redis_addr) \
      CMS_SECRET_FILE=$1 CMS_URL="http://127.0.0.1:$CMS_PORT" CMS_VAR=$VAR \
      CMS_ADMIN=$admin \
          bash "$seed" >"$VAR/seed.env.tmp"
    ) || { rm -f "$VAR/seed.env.tmp"; die "seed-demo.sh failed"; }
    mv "$VAR/seed.env.tmp" "$VAR/seed.env"
}

# The connection variables always; the demo's keys (var/seed.env) only with CMS_DEMO=1.
write_demo_env() {
    if [ "$CMS_DEMO" = 0 ] && [ -f "$VAR/seed.env" ]; then
        say "CMS_DEMO=0: the keys of an earlier demo seed ($VAR/seed.env) stay out of" \
            "demo.env; its account is still in the database"
    fi
    local redis
    redis=$(redis_addr)
    (
        umask 077
        # %q: a conninfo with spaces (CMS_PG_CONNINFO) stays one word for `. demo.env`
        printf 'CMS_URL=%q\n' "http://127.0.0.1:$CMS_PORT"
        printf 'CMS_DATABASE_URL=%q\n' "$(database_url)"
        printf 'CMS_REDIS_URL=%q\n' "redis://${redis%% *}"    # not cms_redis parameters
        if [ "$CMS_DEMO" = 1 ] && [ -f "$VAR/seed.env" ]; then cat "$VAR/seed.env"; fi
    ) >"$VAR/demo.env.tmp"
    chmod 600 "$VAR/demo.env.tmp"
    mv "$VAR/demo.env.tmp" "$VAR/demo.env"
}

migrate() {
    case ${CMS_MIGRATE:-psql} in
        psql)
            "$root/scripts/migrate.sh" "$(pg_conninfo)" ;;
        cms-admin)
            [ -x "$admin" ] || die "$admin (CMS_ADMIN) is not an executable cms-admin"
            "$admin" --db "$(pg_conninfo)" migrate ;;
        none)
            say "CMS_MIGRATE=none: no migrations here; /v1/health/ready answers 503 until" \
                "the schema is current" ;;
        *)
            die "CMS_MIGRATE=$CMS_MIGRATE: psql, cms-admin or none" ;;
    esac
}

prepare() {
    check_demo
    [ -f "$module" ] || die "$module not built (make build)"
    mkdir -p "$VAR" "$prefix/logs" "$prefix/temp" "$VAR/storage" "$VAR/stage"
    chmod 755 "$VAR"
    # Workers run as nobody when the master is root and the config has no `user`.
    if [ "$(id -u)" = 0 ]; then chown nobody "$VAR/storage" "$VAR/stage"; fi
    start_s3

    if embedded_pg || embedded_redis; then
        # Only the embedded ones; an external service is the operator's business.
        "$root/scripts/services.sh" start "$SVC" "$CMS_PG_PORT" "$CMS_REDIS_PORT"
        embedded_pg || "$root/scripts/services.sh" pg-stop "$SVC"
        embedded_redis || "$root/scripts/services.sh" redis-stop "$SVC"
    fi
    if embedded_pg; then
        local have
        have=$(psql -X -At -h 127.0.0.1 -p "$CMS_PG_PORT" -U postgres -d postgres \
                    -c "SELECT 1 FROM pg_database WHERE datname = 'cms'")
        [ "$have" = 1 ] || psql -X -q -h 127.0.0.1 -p "$CMS_PG_PORT" -U postgres -d postgres \
                                -c "CREATE DATABASE cms"
    fi
    migrate
    local secret
    secret=$(make_secret)
    if [ "$CMS_DEMO" = 1 ]; then seed_demo "$secret"; fi
    write_demo_env
    render_conf "$secret"
    nginx_env "$nginx_bin" -t -q -p "$prefix/" -c "$conf" -g "$(nginx_globals)" \
        || die "nginx -t failed for $conf"
}

wait_port() {
    local i
    for i in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$CMS_PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

stop_nginx() {
    local pid i
    pid=$(nginx_pid) || return 0
    kill -QUIT "$pid" 2>/dev/null || return 0     # graceful: finish requests in flight
    for i in $(seq 1 150); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    say "nginx $pid still running after 15 s; sending TERM"
    kill -TERM "$pid" 2>/dev/null || true
}

stop_all() {
    stop_nginx
    stop_s3
    "$root/scripts/services.sh" stop "$SVC"
}

# demo.env on the terminal, a database password in it (conninfo or URL) shown as ...
banner() {
    say "CMS on http://127.0.0.1:$CMS_PORT   (config $conf, logs $prefix/logs/)"
    if [ "$CMS_DEMO" = 1 ]; then
        say "demo environment ($VAR/demo.env):"
    else
        say "environment ($VAR/demo.env; no demo: CMS_DEMO=0):"
    fi
    sed -E -e 's/(password=)(\\.|[^ \\])*/\1.../g' -e 's#(://[^:/@]*:)[^@/]*@#\1...@#' \
        -e 's/^/    /' "$VAR/demo.env" >&2
}

case "$cmd" in
    run)
        nginx_pid >/dev/null && die "nginx is already running (make stop first)"
        prepare
        banner
        trap 'say "stopping"; stop_all; exit 0' INT TERM
        # In the background so that this shell can run its trap: bash defers traps while
        # a foreground child runs. setsid keeps the terminal's Ctrl-C away from nginx, so
        # that the trap stops it gracefully before PostgreSQL and Redis go.
        nginx_env setsid "$nginx_bin" -p "$prefix/" -c "$conf" -g "$(nginx_globals 'daemon off;')" &
        nginx_job=$!
        if ! wait_port; then
            say "nginx does not accept connections on port $CMS_PORT"
            stop_all
            exit 1
        fi
        say "press Ctrl-C to stop"
        set +e
        wait "$nginx_job"
        rc=$?
        set -e
        say "nginx exited ($rc)"
        stop_s3
        "$root/scripts/services.sh" stop "$SVC"
        exit "$rc"
        ;;
    start)
        if nginx_pid >/dev/null; then
            say "already running (make stop first to restart)"
            exit 0
        fi
        prepare
        nginx_env "$nginx_bin" -p "$prefix/" -c "$conf" -g "$(nginx_globals)"
        wait_port || die "nginx does not accept connections on port $CMS_PORT"
        banner
        say "running; make stop (or scripts/cms.sh stop) stops it"
        ;;
    stop)
        stop_all
        say "stopped"
        ;;
    *)
        echo "usage: scripts/cms.sh run|start|stop" >&2
        exit 2
        ;;
esac
