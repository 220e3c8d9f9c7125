#!/usr/bin/env bash
# The package, tried as an operator would (docs/packaging.md): installs build/deb's
# libnginx-mod-http-cms into Debian's own nginx, checks the system configuration with
# nginx -t, migrates an empty database with the installed cms-admin, starts an nginx that
# loads the module through /etc/nginx/modules-enabled, asks readiness, walks the README's
# demo calls, then removes the package and checks nginx -t again.
#
#   make deb-check            (make deb first)
#   scripts/deb-check.sh      (as root; run by scripts/test-env.sh: PostgreSQL + Redis)
#
# Changes the machine: installs and removes the package. Not part of make test.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TEST_CMS_PG_PORT:-}" ]; then
    exec "$root/scripts/test-env.sh" "$0" "$@"
fi
[ "$(id -u)" = 0 ] || { echo "deb-check: needs root (dpkg -i)" >&2; exit 1; }

deb=$(ls "$root"/build/deb/libnginx-mod-http-cms_*_amd64.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "deb-check: no build/deb/*.deb: make deb first" >&2; exit 1; }

say() { printf 'deb-check: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
work=$TEST_CMS_VAR/pkg
mkdir -p "$work/logs" "$work/temp" "$work/storage"
chown nobody "$work/storage" 2>/dev/null || chmod 777 "$work/storage"
pid=""
stop_nginx() {
    [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null || true
    pid=""
}
trap 'stop_nginx; rm -f /etc/nginx/conf.d/cms-deb-check.conf' EXIT

say "dpkg -i $(basename "$deb")"
dpkg -i "$deb" >/dev/null
[ -L /etc/nginx/modules-enabled/50-mod-http-cms.conf ] || fail "no modules-enabled link"
grep -q 'ngx_http_cms_module.so' /usr/share/nginx/modules-available/mod-http-cms.conf \
    || fail "modules-available snippet"
cms-admin version | grep -q "^cms-admin $(cat "$root/VERSION") " || fail "cms-admin version"

# the system's configuration, with the module's directives in conf.d
pg="hostaddr=127.0.0.1 port=$TEST_CMS_PG_PORT dbname=cms_pkg user=postgres"
head -c 48 /dev/urandom > "$work/cms.key"
chmod 600 "$work/cms.key"
cat > /etc/nginx/conf.d/cms-deb-check.conf <<EOF
cms_postgres "$pg";
cms_redis    127.0.0.1:$TEST_CMS_REDIS_PORT;
cms_secret   $work/cms.key;
EOF
say "nginx -t (the system configuration, module enabled)"
nginx -q -t || fail "nginx -t with the package"

# an empty database: not ready, then migrated by the installed cms-admin
psql -X -q -h 127.0.0.1 -p "$TEST_CMS_PG_PORT" -U postgres -c 'CREATE DATABASE cms_pkg'
port=$("$root/scripts/free-ports" 1)
sed -e "s|^load_module @MODULE@;|include /etc/nginx/modules-enabled/*.conf;|" \
    -e "s|@PREFIX@|$work|g" -e "s|@LISTEN@|127.0.0.1:$port|g" -e "s|@PORT@|$port|g" \
    -e "s|@PG_CONNINFO@|$pg|g" -e "s|@REDIS_ADDR@|127.0.0.1:$TEST_CMS_REDIS_PORT|g" \
    -e "s|@RESOLVER@|# no resolver: addresses only|g" -e "s|@SECRET@|$work/cms.key|g" \
    -e "s|@STORAGE@|$work/storage|g" -e "s|@MANIFESTS@|$root/examples/extensions|g" \
    -e "s|@CA_CERTS@|/etc/ssl/certs/ca-certificates.crt|g" \
    "$root/conf/nginx.conf.in" > "$work/nginx.conf"
grep -q '@[A-Z_]*@' "$work/nginx.conf" && fail "unrendered placeholder in nginx.conf"
nginx -c "$work/nginx.conf" || fail "nginx start"
for _ in $(seq 100); do [ -s "$work/logs/nginx.pid" ] && break; sleep 0.1; done
pid=$(cat "$work/logs/nginx.pid")
url=http://127.0.0.1:$port

ready() { curl -s -o "$work/ready.json" -w '%{http_code}' "$url/v1/health/ready"; }
code=$(ready)
[ "$code" = 503 ] || fail "readiness before migrating: $code (want 503)"
grep -q '"schema":"out_of_date"\|"schema":"unknown"' "$work/ready.json" \
    || fail "readiness body before migrating: $(cat "$work/ready.json")"
say "readiness before migrating: 503 $(cat "$work/ready.json")"

cms-admin --db "$pg" migrate | tail -n 1 >&2
cms-admin --db "$pg" migrate --check >/dev/null || fail "migrate --check after migrate"
# the worker asks again every 5 s while behind: wait for it, with a bound
for _ in $(seq 150); do code=$(ready); [ "$code" = 200 ] && break; sleep 0.1; done
[ "$code" = 200 ] || fail "readiness after migrating: $code $(cat "$work/ready.json")"
grep -q "\"version\":\"$(cat "$root/VERSION")\"" "$work/ready.json" || fail "version"
say "readiness after migrating: 200 $(cat "$work/ready.json")"

# the README's demo calls, with the demo seeded by the installed cms-admin
eval "$("$root/scripts/seed-demo.sh" "$pg" "$work/cms.key" /usr/bin/cms-admin)"
call() {
    local want=$1; shift
    local got
    got=$(curl -s -o "$work/body.json" -w '%{http_code}' "$@")
    [ "$got" = "$want" ] || fail "$* -> $got $(head -c 300 "$work/body.json")"
    say "$want ${*: -1}"
}
# each worker asks for the schema again within 5 s of being behind: until then it may
# still answer 503 schema_out_of_date; wait, with a bound, for ten 200s in a row
ok=0
for _ in $(seq 300); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $CMS_SECRET_KEY" \
           "$url/v1/api/key")
    if [ "$code" = 200 ]; then ok=$((ok + 1)); [ $ok = 10 ] && break; else ok=0; sleep 0.1; fi
done
[ $ok = 10 ] || fail "every worker current: last $code"
call 200 -H "Authorization: Bearer $CMS_SECRET_KEY" "$url/v1/api/key"
call 200 -H "Authorization: Bearer $CMS_SESSION_TOKEN" "$url/v1/me"
call 200 -H "Authorization: Bearer $CMS_EXT_KEY" \
    "$url/v1/ext/billing/invoices/${CMS_INVOICE_IDS%% *}"
call 201 -X POST -H "Authorization: Bearer $CMS_ADMIN_KEY" -H 'Idempotency-Key: demo-1' \
    -H 'Content-Type: application/json' "$url/v1/extensions" \
    -d '{"manifest_url": "file:billing-demo.toml",
         "config": {"api_url": "https://pay.example.com", "api_token": "tok_demo_123"}}'
call 200 "$url/v1/openapi.json"
call 200 "$url/v1/docs"
curl -s "$url/metrics" | grep -q "^cms_build_info{version=\"$(cat "$root/VERSION")\"} 1" \
    || fail "cms_build_info in /metrics"
say "cms_build_info in /metrics"

stop_nginx
rm -f /etc/nginx/conf.d/cms-deb-check.conf
say "dpkg -r libnginx-mod-http-cms"
dpkg -r libnginx-mod-http-cms >/dev/null
[ -e /etc/nginx/modules-enabled/50-mod-http-cms.conf ] && fail "modules-enabled link left"
[ -e /usr/lib/nginx/modules/ngx_http_cms_module.so ] && fail "the module left"
nginx -q -t || fail "nginx -t after dpkg -r"
say "nginx -t after dpkg -r: ok"
say "PASS"
