#!/usr/bin/env bash
# make bench: what does GET /v1/health cost next to nginx's floor and PostgreSQL's floor?
#
#   (a) wrk on GET /v1/health             (a PostgreSQL query and a Redis PING per request)
#   (b) wrk on a static file of exactly the same bytes, served by the same nginx
#   (c) pgbench running "SELECT 1;" (-M prepared) on the same PostgreSQL
# Prints requests/s, TPS, and the ratios health/static and health/pgbench.
#
# Throwaway PostgreSQL + Redis (scripts/test-env.sh), own ports, one nginx worker: the
# machine has 2 cores, and wrk, nginx and PostgreSQL share them, so one worker keeps the
# comparison about per-request cost rather than about core scheduling.
# Environment: CMS_MODULE (the .so), BENCH_SECONDS [10], BENCH_CONNECTIONS [32],
# BENCH_PG_MAX [16] (the module's pool size).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" != --inside ]; then
    export TEST_CMS_MODULE=${CMS_MODULE:-$root/build/ngx_http_cms_module.so}
    [ -f "$TEST_CMS_MODULE" ] || { echo "bench: $TEST_CMS_MODULE not built (make build)" >&2; exit 1; }
    exec "$root/scripts/test-env.sh" "$0" --inside
fi

secs=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-32}
pg_max=${BENCH_PG_MAX:-16}
module=$TEST_CMS_MODULE
pg=$TEST_CMS_PG_PORT
redis=$TEST_CMS_REDIS_PORT
prefix=$TEST_CMS_VAR/bench-nginx
read -r port < <("$root/scripts/free-ports" 1)

mkdir -p "$prefix"/{conf,logs,temp,storage,static}
chmod 755 "$prefix" "$prefix/static"
[ "$(id -u)" = 0 ] && chown nobody "$prefix/storage" "$prefix/temp"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$prefix/conf/secret.key"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres -d postgres \
    -c "CREATE DATABASE bench TEMPLATE $TEST_CMS_PG_TEMPLATE"

cat >"$prefix/conf/nginx.conf" <<EOF
load_module $module;
worker_processes 1;
error_log logs/error.log warn;
pid logs/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    cms_postgres "hostaddr=127.0.0.1 port=$pg dbname=bench user=postgres" max=$pg_max queue=1024;
    cms_redis 127.0.0.1:$redis max=8;
    cms_secret $prefix/conf/secret.key;
    cms_storage $prefix/storage;
    server {
        listen 127.0.0.1:$port backlog=1024;
        location /v1/ { cms; }
        # The floor: the same bytes from a file, same server, same worker.
        location /static/ { root $prefix; default_type application/json; }
    }
}
EOF

stop_nginx() {
    local pid
    pid=$(cat "$prefix/logs/nginx.pid" 2>/dev/null) || return 0
    kill -QUIT "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
trap stop_nginx EXIT

/usr/sbin/nginx -p "$prefix/" -c "$prefix/conf/nginx.conf"
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
done

url=http://127.0.0.1:$port
code=$(curl -s -o "$prefix/static/health.json" -w '%{http_code}' "$url/v1/health")
[ "$code" = 200 ] || { echo "bench: GET /v1/health answered $code:" >&2; cat "$prefix/static/health.json" >&2; exit 1; }
size=$(stat -c %s "$prefix/static/health.json")
echo "health body: $size bytes: $(cat "$prefix/static/health.json")"
cmp -s "$prefix/static/health.json" <(curl -s "$url/static/health.json") \
    || { echo "bench: the static copy does not match" >&2; exit 1; }

# Runs wrk, prints its summary, leaves the rate in $rate; fails on errors or non-2xx.
run_wrk() {
    local name=$1 path=$2 out
    echo
    echo "== $name: wrk -t2 -c$conns -d${secs}s $url$path"
    out=$(timeout $((secs + 30)) wrk -t2 -c"$conns" -d"${secs}s" --latency "$url$path")
    echo "$out" | sed -n '/Latency/p;/50%/p;/99%/p;/requests in/p;/Non-2xx/p;/Socket errors/p;/Requests\/sec/p'
    rate=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    if grep -q 'Non-2xx' <<<"$out"; then
        echo "bench: $name had non-2xx answers: the rate above is not a health rate" >&2
    fi
}

run_wrk "health" /v1/health
health=$rate
run_wrk "static file of the same size" /static/health.json
static=$rate

echo
echo "== pgbench -n -c$conns -j2 -T$secs -M prepared (SELECT 1;)"
echo 'SELECT 1;' >"$prefix/select1.sql"
out=$(timeout $((secs + 30)) pgbench -n -c"$conns" -j2 -T"$secs" -M prepared \
          -f "$prefix/select1.sql" -h 127.0.0.1 -p "$pg" -U postgres bench 2>&1)
echo "$out" | grep -E 'latency average|^tps' || true
tps=$(awk '/^tps = / {print $3; exit}' <<<"$out")

echo
printf '%-28s %12s\n' "" "per second"
printf '%-28s %12.0f\n' "health (wrk)" "$health"
printf '%-28s %12.0f\n' "static $size bytes (wrk)" "$static"
printf '%-28s %12.0f\n' "SELECT 1 (pgbench)" "$tps"
printf '%-28s %12.3f\n' "health / static" "$(awk -v a="$health" -v b="$static" 'BEGIN {print a / b}')"
printf '%-28s %12.3f\n' "health / pgbench" "$(awk -v a="$health" -v b="$tps" 'BEGIN {print a / b}')"
echo "(2 cores shared by wrk, one nginx worker and PostgreSQL; pool max=$pg_max)"
if grep -E '\[(alert|crit|emerg)\]' "$prefix/logs/error.log"; then
    echo "bench: error.log has the lines above" >&2
    exit 1
fi
