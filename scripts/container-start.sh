#!/usr/bin/env bash
# The container's start (the Dockerfile's CMD, docs/container.md): checks what a container
# needs, then runs scripts/cms.sh run in the foreground, so that the configuration is
# rendered and nginx run exactly as `make run` does.
#
#   production, CMS_DEMO=0 (the image's default): CMS_PG_CONNINFO, CMS_REDIS_ADDR and
#       CMS_SECRET_FILE are required. The secret file must be readable by this user and
#       give nothing to others and at most read to its group (0600, 0640, 0400, 0440).
#   demo, CMS_DEMO=1 (the image built with --target demo): PostgreSQL and Redis inside the
#       container, data in CMS_VAR, the demo account seeded (scripts/seed-demo.sh);
#       refused with CMS_PG_CONNINFO, as scripts/cms.sh refuses it.
#
# Then: pid files a previous container left in the CMS_VAR volume are dropped when their
# number now names another program; nginx's logs go to the container's stdout (access)
# and stderr (errors) with CMS_LOGS=stdout, else stay in files under CMS_VAR/nginx/logs;
# and `exec scripts/cms.sh run` applies the migrations with cms-admin before nginx starts
# (CMS_MIGRATE=cms-admin: its advisory lock lets replicas start at once; none: applied
# elsewhere, readiness waits). `docker stop` (SIGTERM) makes nginx quit gracefully (15 s
# at most), then the embedded services stop.
#
# Environment (defaults in brackets), besides scripts/cms.sh's own:
#   CMS_DEMO [0]   CMS_VAR [/var/lib/cms]   CMS_LISTEN [0.0.0.0]   CMS_PORT [8080]
#   CMS_MODULE [/usr/lib/nginx/modules/ngx_http_cms_module.so]   CMS_ADMIN [/usr/bin/cms-admin]
#   CMS_MANIFESTS [examples/extensions next to scripts/, the demo's]
#   CMS_MIGRATE [cms-admin] (or none)   CMS_LOGS [stdout] (or files)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export CMS_DEMO=${CMS_DEMO:-0}
export CMS_VAR=${CMS_VAR:-/var/lib/cms}
export CMS_LISTEN=${CMS_LISTEN:-0.0.0.0}
export CMS_PORT=${CMS_PORT:-8080}
export CMS_MODULE=${CMS_MODULE:-/usr/lib/nginx/modules/ngx_http_cms_module.so}
export CMS_ADMIN=${CMS_ADMIN:-/usr/bin/cms-admin}
export CMS_MANIFESTS=${CMS_MANIFESTS:-$here/../examples/extensions}
export CMS_MIGRATE=${CMS_MIGRATE:-cms-admin}
logs=${CMS_LOGS:-stdout}

say() { echo "container-start: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" != 0 ] || die "refusing to run as root: the image runs as its user cms" \
    "(uid 10001); drop --user 0 (docs/container.md)"

case $CMS_DEMO in
    0|1) ;;
    *) die "CMS_DEMO=$CMS_DEMO: 0 (production, the default) or 1 (the demo)" ;;
esac
case $CMS_MIGRATE in
    cms-admin|none) ;;
    *) die "CMS_MIGRATE=$CMS_MIGRATE: cms-admin (the default) or none" ;;
esac

if [ "$CMS_DEMO" = 1 ]; then
    [ -z "${CMS_PG_CONNINFO:-}" ] || die "CMS_DEMO=1 with an external database" \
        "(CMS_PG_CONNINFO) is refused: the demo seeds an account with a known password"
    compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null \
        || die "CMS_DEMO=1: this image has no PostgreSQL server; the demo is the image" \
               "built with --target demo (docs/container.md)"
    [ -n "${CMS_REDIS_ADDR:-}" ] || command -v redis-server >/dev/null \
        || die "CMS_DEMO=1: this image has no Redis server (build --target demo)"
    if [ ! -f "$here/services.sh" ] || [ ! -f "$here/seed-demo.sh" ]; then
        die "CMS_DEMO=1: scripts/services.sh or scripts/seed-demo.sh is missing" \
            "(build --target demo)"
    fi
else
    missing=()
    for v in CMS_PG_CONNINFO CMS_REDIS_ADDR CMS_SECRET_FILE; do
        [ -n "${!v:-}" ] || missing+=("$v")
    done
    [ ${#missing[@]} -eq 0 ] || die "production (CMS_DEMO=0) needs ${missing[*]}: your" \
        "PostgreSQL, your Redis and a mounted secret (docs/container.md); the demo is" \
        "CMS_DEMO=1 in the image built with --target demo"
fi

# The secret: a mounted file only this user (and at most its group, reading) can open.
if [ -n "${CMS_SECRET_FILE:-}" ]; then
    f=$CMS_SECRET_FILE
    [ -f "$f" ] || die "CMS_SECRET_FILE=$f is not a file (mount it, read-only)"
    [ -r "$f" ] || die "CMS_SECRET_FILE=$f is not readable by uid $(id -u): chown it" \
        "to $(id -u) (mode 0600) or to its group $(id -g) (mode 0640)"
    mode=$(stat -L -c %a "$f")
    (( (8#$mode & 8#037) == 0 )) || die "CMS_SECRET_FILE=$f has mode $mode: others may" \
        "read it or its group may write it; 0600 or 0640"
    [ "$(stat -L -c %s "$f")" -ge 32 ] || die "CMS_SECRET_FILE=$f has less than 32 bytes"
fi

if [ "${CMS_STORAGE:-folder}" = s3 ] && [ -z "${CMS_S3_ENDPOINT:-}" ]; then
    die "CMS_STORAGE=s3 needs CMS_S3_ENDPOINT: the image has no local S3 server"
fi

if ! mkdir -p "$CMS_VAR/nginx/logs" 2>/dev/null || [ ! -w "$CMS_VAR" ]; then
    die "$CMS_VAR (CMS_VAR) is not writable by uid $(id -u): chown the volume to it"
fi

# A pid file from a previous container names a process of that container: its number may
# now be another program here (cms.sh would then wait for the wrong process, PostgreSQL
# refuse to start). Dropped unless that number runs the program the file is about.
drop_stale() {
    local f=$1 name=$2 pid
    [ -f "$f" ] || return 0
    pid=$(head -n 1 "$f" | tr -dc 0-9)
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && return 0
    say "dropping the stale $f"
    rm -f "$f"
}
drop_stale "$CMS_VAR/nginx/logs/nginx.pid" nginx
drop_stale "$CMS_VAR/nginx/nginx.pid" nginx
drop_stale "$CMS_VAR/redis.pid" redis-server
drop_stale "$CMS_VAR/pg/data/postmaster.pid" postgres

# nginx's logs (conf/nginx.conf.in: @PREFIX@/logs/access.log and error.log, @PREFIX@ being
# CMS_VAR/nginx) as links to this process's stdout and stderr, which nginx inherits;
# files when those cannot be opened (a pipe owned by another user).
dir=$CMS_VAR/nginx/logs
case $logs in
    stdout)
        if { : >>/dev/stdout && : >>/dev/stderr; } 2>/dev/null; then
            ln -sfn /dev/stdout "$dir/access.log"
            ln -sfn /dev/stderr "$dir/error.log"
        else
            say "/dev/stdout or /dev/stderr cannot be opened by uid $(id -u): nginx logs" \
                "to $dir"
            rm -f "$dir/access.log" "$dir/error.log"
        fi
        ;;
    files)
        for f in "$dir/access.log" "$dir/error.log"; do
            if [ -L "$f" ]; then rm -f "$f"; fi
        done
        ;;
    *) die "CMS_LOGS=$logs: stdout (the default) or files" ;;
esac

exec "$here/cms.sh" run
