#!/usr/bin/env bash
# Apply sql/NNNN_*.sql migrations that the database has not recorded yet, in order.
#
#   scripts/migrate.sh "postgresql://postgres@127.0.0.1:54320/cms"
#   scripts/migrate.sh "hostaddr=127.0.0.1 port=54320 dbname=cms user=postgres"
#
# Each file runs in one transaction (ON_ERROR_STOP) together with the INSERT that
# records it in schema_migrations(version, applied_at), where version is the file name
# without .sql. A file whose first line is "-- migrate: no transaction" runs statement by
# statement instead (CREATE INDEX CONCURRENTLY, batches that commit) and is recorded once
# it ran whole; its steps must be safe to run again. The INSERT goes first otherwise:
# should a file carry its own BEGIN/COMMIT, its COMMIT then commits the record with it,
# so a file is never applied without being recorded. A failing file rolls back entirely and stops the run (exit status 1).
#
# The whole run is one session holding a PostgreSQL advisory lock, the same one
# `cms-admin migrate` takes: runs started at once (hosts of a fleet, make test's template
# beside make run) apply each file exactly once, the later ones finding it recorded.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: scripts/migrate.sh CONNINFO_OR_URL" >&2; exit 2; }
conn=$1
root=$(cd "$(dirname "$0")/.." && pwd)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_=(psql -X -q -v ON_ERROR_STOP=1 -d "$conn")

shopt -s nullglob
files=("$root"/sql/[0-9][0-9][0-9][0-9]_*.sql)
if [ ${#files[@]} -eq 0 ]; then
    echo "migrate: no migrations in sql/" >&2
    exit 0
fi

# The names are pasted into SQL below: allow only what a migration name should contain.
for f in "${files[@]}"; do
    [[ $(basename "$f" .sql) =~ ^[0-9]{4}_[A-Za-z0-9_]+$ ]] \
        || { echo "migrate: bad file name $f" >&2; exit 1; }
done

# The lock, "cms migrate", taken by polling: a session waiting in pg_advisory_lock() holds a
# snapshot that the holder's CREATE INDEX CONCURRENTLY would wait for (a deadlock). Between
# tries the session is idle; psql has no loop, so the file includes itself until it holds.
lockloop=$(mktemp)
trap 'rm -f "$lockloop"' EXIT
cat > "$lockloop" <<EOF
SELECT pg_try_advisory_lock(x'7163636d73206d67'::bigint) AS locked \gset
\if :locked
\else
SELECT pg_sleep(0.1) \g /dev/null
\i '$lockloop'
\endif
EOF

# one script for one session: the lock, then each file unless recorded once it is held
script() {
    local f version
    echo "SET client_min_messages = warning;"
    echo "\\i '$lockloop'"
    echo "CREATE TABLE IF NOT EXISTS schema_migrations (
              version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
    echo "\\set applied 0"
    for f in "${files[@]}"; do       # the glob sorts, and NNNN_ sorts numerically
        version=$(basename "$f" .sql)
        echo "SELECT NOT EXISTS (SELECT 1 FROM schema_migrations WHERE version = '$version')
                  AS todo \\gset"
        echo "\\if :todo"
        if [ "$(head -n 1 "$f")" = "-- migrate: no transaction" ]; then
            # Its statements run one by one (CREATE INDEX CONCURRENTLY, batches that
            # commit), each step safe to run again; recorded once all of them ran.
            echo "\\i '$f'"
            echo "INSERT INTO schema_migrations (version) VALUES ('$version');"
        else
            # The INSERT goes first: should a file carry its own BEGIN/COMMIT, its COMMIT
            # then commits the record with it, so a file is never applied unrecorded.
            echo "BEGIN;"
            echo "INSERT INTO schema_migrations (version) VALUES ('$version');"
            echo "\\i '$f'"
            echo "COMMIT;"
        fi
        echo "\\warn migrate: applied $version"
        echo "SELECT :applied + 1 AS applied \\gset"
        echo "\\endif"
    done
    echo "SELECT ${#files[@]} - :applied AS already \\gset"
    echo "\\warn migrate: :applied applied, :already already there"
}

# A failing file rolls back (ON_ERROR_STOP ends the session, and the lock with it). The
# two warnings that a file's own BEGIN/COMMIT causes in the outer transaction are expected.
script | "${psql_[@]}" -f - \
    2> >(grep -v -e 'WARNING:  there is already a transaction in progress' \
                 -e 'WARNING:  there is no transaction in progress' >&2) \
    || { echo "migrate: a migration failed and was rolled back (above)" >&2; exit 1; }
