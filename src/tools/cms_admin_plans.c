
/*
 * cms-admin plan set | assign | list: plans and their limits, and which
 * plan a workspace is on.  The limits are only stored here; what they
 * allow is decided by sql/0016_teams.sql's cms_plan_refusal().
 */


#include "cms_admin.h"

#include <stdio.h>
#include <string.h>


static int cms_admin_plan_number(const char *what, const char *s,
    int none);


static const cms_admin_pg_error_t  cms_admin_plan_set_errors[] = {
    { "23514", "a value is out of range (see cms-admin help)" },
    { "22003", "a number is too large" },
    { NULL, NULL }
};

static const cms_admin_pg_error_t  cms_admin_plan_assign_errors[] = {
    { "23503", "no such plan" },
    { NULL, NULL }
};


/*
 * $1 name; $2 members, $6 sites, $7 webhooks: digits, "none" (no limit)
 * or NULL (kept; a new plan: none); $3 storage, $4 upload: digits or NULL
 * (kept; a new plan: 1 GiB, 50 MiB); $5 custom modules "yes"/"no" or NULL
 * (kept; new: yes).
 */
static const cms_admin_query_t  cms_admin_plan_upsert = {
    "plan set",
    "INSERT INTO plans AS p (name, member_limit, storage_limit_bytes,"
    " upload_limit_bytes, custom_modules, site_limit, webhook_limit)"
    " VALUES ($1, nullif($2, 'none')::integer,"
    "  coalesce($3::bigint, 1073741824), coalesce($4::bigint, 52428800),"
    "  coalesce($5 = 'yes', true), nullif($6, 'none')::integer,"
    "  nullif($7, 'none')::integer)"
    " ON CONFLICT (name) DO UPDATE SET"
    "  member_limit = CASE WHEN $2 IS NULL THEN p.member_limit"
    "   ELSE excluded.member_limit END,"
    "  storage_limit_bytes = coalesce($3::bigint, p.storage_limit_bytes),"
    "  upload_limit_bytes = coalesce($4::bigint, p.upload_limit_bytes),"
    "  custom_modules = coalesce($5 = 'yes', p.custom_modules),"
    "  site_limit = CASE WHEN $6 IS NULL THEN p.site_limit"
    "   ELSE excluded.site_limit END,"
    "  webhook_limit = CASE WHEN $7 IS NULL THEN p.webhook_limit"
    "   ELSE excluded.webhook_limit END,"
    "  updated_at = now()"
    " RETURNING name",
    7, cms_admin_plan_set_errors
};

/* $1 workspace, $2 plan: the change is written to the audit log */
static const cms_admin_query_t  cms_admin_plan_assign_q = {
    "plan assign",
    "WITH o AS (SELECT id, plan FROM workspaces WHERE id = $1 FOR UPDATE),"
    " u AS (UPDATE workspaces w SET plan = $2, updated_at = now() FROM o"
    "  WHERE w.id = o.id RETURNING w.id, o.plan AS old),"
    " a AS (INSERT INTO audit_events (workspace_id, action, target_type,"
    "  target_id, data) SELECT id, 'plan.changed', 'workspace', id,"
    "  jsonb_build_object('from', old, 'to', $2::text) FROM u)"
    " SELECT id FROM u",
    2, cms_admin_plan_assign_errors
};

static const cms_admin_query_t  cms_admin_plan_list_q = {
    "plan list",
    "SELECT name, coalesce(member_limit::text, 'none'), storage_limit_bytes,"
    " upload_limit_bytes, CASE WHEN custom_modules THEN 'yes' ELSE 'no' END,"
    " coalesce(site_limit::text, 'none'),"
    " coalesce(webhook_limit::text, 'none') FROM plans ORDER BY name",
    0, NULL
};


/*
 * plan set --name N [--members N|none] [--storage BYTES] [--upload BYTES]
 *          [--custom-modules yes|no] [--sites N|none] [--webhooks N|none]
 * creates the plan or changes the limits given; prints its name.
 */

int
cms_admin_plan_set(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    char         name[64];
    const char  *params[7];

    if (cms_admin_check_printable("name", a->name, 1, 63) != 0
        || cms_admin_plan_number("members", a->members, 1) != 0
        || cms_admin_plan_number("storage", a->storage, 0) != 0
        || cms_admin_plan_number("upload", a->upload, 0) != 0
        || cms_admin_plan_number("sites", a->sites, 1) != 0
        || cms_admin_plan_number("webhooks", a->webhooks, 1) != 0)
    {
        return -1;
    }

    if (a->custom_modules != NULL && strcmp(a->custom_modules, "yes") != 0
        && strcmp(a->custom_modules, "no") != 0)
    {
        return cms_admin_error("--custom-modules is yes or no");
    }

    params[0] = a->name;
    params[1] = a->members;
    params[2] = a->storage;
    params[3] = a->upload;
    params[4] = a->custom_modules;
    params[5] = a->sites;
    params[6] = a->webhooks;

    if (cms_admin_pg_one(ctx, &cms_admin_plan_upsert, params, name,
                         sizeof(name))
        != 1)
    {
        return cms_admin_error("plan set: \"%s\" is not a plan name "
                               "(a-z 0-9 _ -, at most 63)", a->name);
    }

    printf("%s\n", name);

    return 0;
}


/* plan assign --workspace ID --name PLAN: prints the workspace id */

int
cms_admin_plan_assign(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         id[CMS_ADMIN_ID_LEN + 1];
    const char  *params[2];

    if (cms_admin_check_uuid("workspace", a->workspace) != 0
        || cms_admin_check_printable("name", a->name, 1, 63) != 0)
    {
        return -1;
    }

    params[0] = a->workspace;
    params[1] = a->name;

    rc = cms_admin_pg_one(ctx, &cms_admin_plan_assign_q, params, id,
                          sizeof(id));

    if (rc == 0) {
        return cms_admin_error("plan assign: no workspace with id \"%s\"",
                               a->workspace);
    }

    if (rc < 0) {
        return -1;
    }

    printf("%s\n", id);

    return 0;
}


/* plan list: one line per plan, tab-separated */

int
cms_admin_plan_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int        i, j, n, ncols;
    PGresult  *res;

    (void) a;

    res = cms_admin_pg_run(ctx, &cms_admin_plan_list_q, NULL);

    if (res == NULL) {
        return -1;
    }

    ncols = PQnfields(res);
    n = PQntuples(res);

    for (i = 0; i < n; i++) {
        for (j = 0; j < ncols; j++) {
            printf("%s%c", PQgetvalue(res, i, j), j < ncols - 1 ? '\t' : '\n');
        }
    }

    PQclear(res);

    return 0;
}


/* absent, digits (at most 18), or "none" when allowed */
static int
cms_admin_plan_number(const char *what, const char *s, int none)
{
    size_t  i, n;

    if (s == NULL || (none && strcmp(s, "none") == 0)) {
        return 0;
    }

    n = strlen(s);

    for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        /* void */
    }

    if (n == 0 || i != n || n > 18) {
        return cms_admin_error("--%s \"%s\" is not a number%s", what, s,
                               none ? " or none" : "");
    }

    return 0;
}
