#!/usr/bin/env bash
# Apply sql/NNNN_*.sql migrations that the database has not recorded yet, in order.
#
#   scripts/migrate.sh "postgresql://postgres@127.0.0.1:54320/cms"
#   scripts/migrate.sh "hostaddr=127.0.0.1 port=54320 dbname=cms user=postgres"
#
# Each file runs in one transaction (psql -1, ON_ERROR_STOP) together with the INSERT that
# records it in schema_migrations(version, applied_at), where version is the file name
# without .sql. The INSERT goes first: should a file carry its own BEGIN/COMMIT, its COMMIT
# then commits the record with it, so a file is never applied without being recorded.
# A failing file rolls back entirely and stops the run (exit status 1).
#
# For one database on one machine (make test's template, make run): it takes no lock, so
# two runs at once may both try a file (the second then fails on schema_migrations' key and
# rolls back). Hosts that may start together use `cms-admin migrate`, which holds an
# advisory lock for its whole run (scripts/cms.sh: CMS_MIGRATE=cms-admin; the container).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: scripts/migrate.sh CONNINFO_OR_URL" >&2; exit 2; }
conn=$1
root=$(cd "$(dirname "$0")/.." && pwd)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_=(psql -X -q -v ON_ERROR_STOP=1 -d "$conn")

"${psql_[@]}" -c "CREATE TABLE IF NOT EXISTS schema_migrations (
                      version text PRIMARY KEY,
                      applied_at timestamptz NOT NULL DEFAULT now())"
applied=$("${psql_[@]}" -At -c "SELECT version FROM schema_migrations")

shopt -s nullglob
files=("$root"/sql/[0-9][0-9][0-9][0-9]_*.sql)
if [ ${#files[@]} -eq 0 ]; then
    echo "migrate: no migrations in sql/" >&2
    exit 0
fi
count=0
for f in "${files[@]}"; do           # the glob sorts, and NNNN_ sorts numerically
    version=$(basename "$f" .sql)
    # The name is pasted into SQL below: allow only what a migration name should contain.
    [[ $version =~ ^[0-9]{4}_[A-Za-z0-9_]+$ ]] || { echo "migrate: bad file name $f" >&2; exit 1; }
    grep -qxF "$version" <<<"$applied" && continue
    # The two warnings that a file's own BEGIN/COMMIT causes inside psql -1 are expected.
    "${psql_[@]}" -1 -c "INSERT INTO schema_migrations (version) VALUES ('$version')" -f "$f" \
        2> >(grep -v -e 'WARNING:  there is already a transaction in progress' \
                     -e 'WARNING:  there is no transaction in progress' >&2) \
        || { echo "migrate: $version failed, rolled back" >&2; exit 1; }
    echo "migrate: applied $version" >&2
    count=$((count + 1))
done
echo "migrate: $count applied, $(( ${#files[@]} - count )) already there" >&2
