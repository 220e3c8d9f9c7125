#!/usr/bin/env bash
# Seed a demo user, workspace, session token and API key, and a demo clinic with a
# billing extension, its keys, invoices and an admin credential, for `make run`.
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
#
# Extensions: reuses the oldest facility named "Demo Clinic", else creates it; reuses its
# extension billing (the demo's own, so that examples/extensions/billing-demo.toml
# stays free to install), else creates it (1.0.0, category payment, running, required
# privilege billing:view, privileges ext:billing:read,ext:billing:write,ext:control:write);
# mints a new live and a new sandbox extension key (each run adds two); tops the facility
# up to 3 live and 1 sandbox pending_payment invoices (amounts 5000, 12500, 750 and 2500
# XOF for new ones), so that the demo always has invoices left to pay.
#
# Extension management: mints a new admin credential "demo" of the facility with
# admin:extensions:view and admin:extensions:manage (each run adds one), for
# /v1/extensions; makes the demo user a member of the facility holding exactly
# billing:view (what the UI-token route checks).
#
# Standard output is only shell assignments, one per line, values single-quoted:
#   CMS_WORKSPACE_ID='...'  CMS_SECRET_KEY='...'  CMS_SESSION_TOKEN='...'
#   CMS_FACILITY_ID='...'  CMS_EXT_KEY='sk_live_...'  CMS_SANDBOX_EXT_KEY='sk_sandbox_...'
#   CMS_INVOICE_IDS='id1 id2 id3' (live, oldest first)  CMS_SANDBOX_INVOICE_ID='...'
#   CMS_ADMIN_KEY='sk_admin_...'
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

# --- extensions: facility, billing extension, its keys, invoices ---

facility_id=$(sql <<'SQL'
SELECT id FROM facilities WHERE name = 'Demo Clinic' ORDER BY created_at, id LIMIT 1
SQL
)

if [ -z "$facility_id" ]; then
    facility_id=$(admin_ facility create --name "Demo Clinic")
fi

extension_id=$(sql -v fid="$facility_id" <<'SQL'
SELECT id FROM extensions WHERE facility_id = :'fid' AND name = 'billing'
SQL
)

if [ -z "$extension_id" ]; then
    extension_id=$(admin_ extension create --facility "$facility_id" --name billing \
                       --version 1.0.0 --category payment --status running \
                       --required-privilege billing:view \
                       --privileges ext:billing:read,ext:billing:write,ext:control:write)
fi

ext_key=$(admin_ extkey create --extension "$extension_id")
sandbox_ext_key=$(admin_ extkey create --extension "$extension_id" --sandbox)

# --- extension management: an admin credential, the demo user's privileges ---

admin_key=$(admin_ admin create --facility "$facility_id" --name demo \
                --privileges admin:extensions:view,admin:extensions:manage)
admin_ facility member --facility "$facility_id" --email "$email" \
       --privileges billing:view >/dev/null

# the oldest pending_payment invoices of the facility in one mode, one id a line
pending() {
    sql -v fid="$facility_id" -v live="$1" -v n="$2" <<'SQL'
SELECT id FROM invoices
 WHERE facility_id = :'fid' AND livemode = :'live'::boolean AND status = 'pending_payment'
 ORDER BY created_at, id LIMIT :'n'::integer
SQL
}

live=$(pending true 3)
count=$(grep -c . <<<"$live" || true)
amounts=(5000 12500 750)
for ((i = count; i < 3; i++)); do
    admin_ invoice create --facility "$facility_id" --patient "demo-patient-$((i + 1))" \
                          --amount "${amounts[i]}" --currency XOF >/dev/null
done
invoice_ids=$(pending true 3 | paste -sd ' ')

sandbox_invoice_id=$(pending false 1)
if [ -z "$sandbox_invoice_id" ]; then
    sandbox_invoice_id=$(admin_ invoice create --facility "$facility_id" \
                             --patient demo-patient-sandbox --amount 2500 --currency XOF \
                             --sandbox)
fi

# uuid, base62 key and base64url token: nothing that needs escaping inside '...'
for v in "$workspace_id" "$key" "$token" "$facility_id" "$ext_key" "$sandbox_ext_key" \
         "$sandbox_invoice_id" "$admin_key"; do
    [[ $v =~ ^[A-Za-z0-9._-]+$ ]] || die "unexpected output from cms-admin"
done
[[ $invoice_ids =~ ^[0-9a-f-]{36}( [0-9a-f-]{36}){2}$ ]] || die "unexpected invoice ids"

printf "CMS_WORKSPACE_ID='%s'\n" "$workspace_id"
printf "CMS_SECRET_KEY='%s'\n" "$key"
printf "CMS_SESSION_TOKEN='%s'\n" "$token"
printf "CMS_FACILITY_ID='%s'\n" "$facility_id"
printf "CMS_EXT_KEY='%s'\n" "$ext_key"
printf "CMS_SANDBOX_EXT_KEY='%s'\n" "$sandbox_ext_key"
printf "CMS_INVOICE_IDS='%s'\n" "$invoice_ids"
printf "CMS_SANDBOX_INVOICE_ID='%s'\n" "$sandbox_invoice_id"
printf "CMS_ADMIN_KEY='%s'\n" "$admin_key"
