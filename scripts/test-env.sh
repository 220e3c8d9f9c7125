#!/usr/bin/env bash
# Run a command next to a throwaway PostgreSQL + Redis, then throw them away.
#
#   scripts/test-env.sh prove -r -I t/lib t/
#
# Makes a folder under /tmp, starts both services there on free loopback ports
# (CMS_PG_FAST=1: fsync off), creates the database cms_template and migrates it from sql/,
# exports the TEST_* variables below, runs the command, stops the services and removes
# the folder (also on failure and Ctrl-C), and exits with the command's status.
#
#   TEST_NGINX_BINARY     /usr/sbin/nginx unless already set
#   TEST_CMS_MODULE       the built .so; set by the Makefile (default: build/ or build-asan/)
#   TEST_CMS_ROOT         the repository
#   TEST_CMS_VAR          the throwaway folder (tests put their nginx prefixes in it)
#   TEST_CMS_PG_PORT      PostgreSQL on 127.0.0.1, superuser postgres, no password
#   TEST_CMS_PG_TEMPLATE  cms_template: test files clone their own database from it
#   TEST_CMS_REDIS_PORT   Redis on 127.0.0.1
#   TEST_CMS_ASAN         0 or 1 (1: the module was built with ASan/UBSan)
# Set CMS_KEEP_TEST_ENV=1 to keep the folder (logs) after the run.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: scripts/test-env.sh COMMAND [ARGS...]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)

export TEST_CMS_ASAN=${TEST_CMS_ASAN:-0}
if [ -z "${TEST_CMS_MODULE:-}" ]; then
    if [ "$TEST_CMS_ASAN" = 1 ]; then
        TEST_CMS_MODULE=$root/build-asan/ngx_http_cms_module.so
    else
        TEST_CMS_MODULE=$root/build/ngx_http_cms_module.so
    fi
fi
export TEST_CMS_MODULE
export TEST_NGINX_BINARY=${TEST_NGINX_BINARY:-/usr/sbin/nginx}
export TEST_CMS_ROOT=$root
export TEST_CMS_PG_TEMPLATE=cms_template

var=$(mktemp -d /tmp/cms-test.XXXXXX)
chmod 755 "$var"                      # the postgres user and nginx workers (nobody) enter it
export TEST_CMS_VAR=$var

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    "$root/scripts/services.sh" stop "$var" || true
    if [ "${CMS_KEEP_TEST_ENV:-0}" = 1 ]; then
        echo "test-env: kept $var" >&2
    else
        rm -rf "$var"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

read -r pg_port redis_port < <("$root/scripts/free-ports" 2)
export TEST_CMS_PG_PORT=$pg_port TEST_CMS_REDIS_PORT=$redis_port
CMS_PG_FAST=1 "$root/scripts/services.sh" start "$var" "$pg_port" "$redis_port"
psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres \
    -c "CREATE DATABASE $TEST_CMS_PG_TEMPLATE"
"$root/scripts/migrate.sh" "hostaddr=127.0.0.1 port=$pg_port dbname=$TEST_CMS_PG_TEMPLATE user=postgres"

set +e
"$@"
rc=$?
set -e
exit "$rc"
