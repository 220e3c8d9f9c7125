#!/usr/bin/env bash
# Seed a demo user, workspace, session token and API key, for `make run`.
#
#   scripts/seed-demo.sh CONNINFO SECRET_FILE CMS_ADMIN_BINARY
#   scripts/seed-demo.sh        (scripts/cms.sh's way: everything from the environment)
#
# Without arguments: CONNINFO from CMS_DATABASE_URL (else CMS_PG_CONNINFO), SECRET_FILE
# from CMS_SECRET_FILE, the binary from CMS_ADMIN (default build/cms-admin).
#
# Reuses demo@example.com when it exists, else creates it (password demo-password-123,
# verified); reuses its oldest workspace named "Demo" that it owns, else creates one.
# Then mints a session token and a new API key with every scope (each run adds a key).
# Standard output is only shell assignments, one per line, values single-quoted:
#   CMS_WORKSPACE_ID='...'  CMS_SECRET_KEY='...'  CMS_SESSION_TOKEN='...'
# Errors go to standard error, exit status 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "seed-demo: $*" >&2; exit 1; }

if [ $# -eq 3 ]; then
    conn=$1 secret=$2 admin=$3
elif [ $# -eq 0 ]; then
    conn=${CMS_DATABASE_URL:-${CMS_PG_CONNINFO:-}}
    secret=${CMS_SECRET_FILE:-}
    admin=${CMS_ADMIN:-$root/build/cms-admin}
else
    echo "usage: scripts/seed-demo.sh [CONNINFO SECRET_FILE CMS_ADMIN_BINARY]" >&2
    exit 1
fi

[ -n "$conn" ] || die "no database (CONNINFO or CMS_DATABASE_URL)"
[ -n "$secret" ] || die "no secret file (SECRET_FILE or CMS_SECRET_FILE)"
[ -x "$admin" ] || die "$admin is not an executable cms-admin (build it first)"

email=demo@example.com
scopes=
for r in articles videos categories media comments custom pages webhooks podcasts \
         subscribers; do
    scopes+=${scopes:+,}$r:read,$r:write
done

admin_() { "$admin" --db "$conn" --secret "$secret" "$@"; }

# The lookups are plain reads: values go in psql variables, never into the SQL text.
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$conn" -v email="$email" "$@"; }

user_id=$(sql <<'SQL'
SELECT id FROM users WHERE lower(email) = lower(:'email')
SQL
)

if [ -z "$user_id" ]; then
    # the password goes through stdin, out of ps
    printf '%s\n' demo-password-123 \
        | admin_ user create --email "$email" --password - --name Demo --verified >/dev/null
fi

workspace_id=$(sql <<'SQL'
SELECT w.id FROM workspaces w JOIN members m ON m.workspace_id = w.id
  JOIN users u ON u.id = m.user_id
 WHERE lower(u.email) = lower(:'email') AND m.role = 'owner' AND w.name = 'Demo'
 ORDER BY w.created_at, w.id LIMIT 1
SQL
)

if [ -z "$workspace_id" ]; then
    workspace_id=$(admin_ workspace create --name Demo --owner "$email")
fi

token=$(admin_ session --email "$email")
key=$(admin_ key create --workspace "$workspace_id" --creator "$email" --name demo \
                        --scopes "$scopes")

# uuid, base62 key and base64url token: nothing that needs escaping inside '...'
for v in "$workspace_id" "$key" "$token"; do
    [[ $v =~ ^[A-Za-z0-9._-]+$ ]] || die "unexpected output from cms-admin"
done

printf "CMS_WORKSPACE_ID='%s'\n" "$workspace_id"
printf "CMS_SECRET_KEY='%s'\n" "$key"
printf "CMS_SESSION_TOKEN='%s'\n" "$token"
