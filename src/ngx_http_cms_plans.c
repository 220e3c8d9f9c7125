
/*
 * A workspace's plan and its audit log, under /v1/workspaces/{id}:
 * GET .../plan (any member: the limits and what is used of them) and
 * GET .../audit-events (owners and admins, newest first, paged).  Limits
 * are decided in one place, sql/0016_teams.sql's cms_plan_refusal(); this
 * file only shows them.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"


static ngx_int_t ngx_http_cms_plans_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_plans_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_audit_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* a limit NULL in the plan is none: null in the answer */
static const ngx_http_cms_col_t  ngx_http_cms_plan_cols[] = {
    { "name", 0, NGX_HTTP_CMS_COL_STRING },
    { "member_limit", 1, NGX_HTTP_CMS_COL_NUMBER },
    { "storage_limit_bytes", 2, NGX_HTTP_CMS_COL_NUMBER },
    { "upload_limit_bytes", 3, NGX_HTTP_CMS_COL_NUMBER },
    { "custom_modules", 4, NGX_HTTP_CMS_COL_BOOL },
    { "site_limit", 5, NGX_HTTP_CMS_COL_NUMBER },
    { "webhook_limit", 6, NGX_HTTP_CMS_COL_NUMBER },
    { "members_used", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "storage_used_bytes", 8, NGX_HTTP_CMS_COL_NUMBER },
};

static const ngx_http_cms_record_t  ngx_http_cms_plan = {
    "plan", "plans", ngx_http_cms_plan_cols,
    sizeof(ngx_http_cms_plan_cols) / sizeof(ngx_http_cms_col_t)
};


static const ngx_http_cms_col_t  ngx_http_cms_audit_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "action", 2, NGX_HTTP_CMS_COL_STRING },
    { "actor_id", 3, NGX_HTTP_CMS_COL_STRING },
    { "target_type", 4, NGX_HTTP_CMS_COL_STRING },
    { "target_id", 5, NGX_HTTP_CMS_COL_STRING },
    { "data", 6, NGX_HTTP_CMS_COL_JSON },
    { "created_at", 7, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_audit_event = {
    "audit_event", "audit_events", ngx_http_cms_audit_cols,
    sizeof(ngx_http_cms_audit_cols) / sizeof(ngx_http_cms_col_t)
};


/* $1 workspace */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_plans_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT p.name, p.member_limit, p.storage_limit_bytes,"
        " p.upload_limit_bytes, p.custom_modules, p.site_limit,"
        " p.webhook_limit,"
        " cms_plan_usage(w.id, 'members'),"
        " cms_plan_usage(w.id, 'storage_bytes')"
        " FROM workspaces w JOIN plans p ON p.name = w.plan"
        " WHERE w.id = $1",
        1);

/* $1 workspace, $2 limit, $3 offset; newest first */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_audit_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM audit_events"
        "  WHERE workspace_id = $1) t"
        " LEFT JOIN LATERAL (SELECT a.id, a.action, a.actor_id,"
        "  a.target_type, a.target_id, a.data::text, a.created_at"
        "  FROM audit_events a WHERE a.workspace_id = $1"
        "  ORDER BY a.created_at DESC, a.id DESC LIMIT $2 OFFSET $3) p"
        " ON true",
        3);


ngx_http_cms_route_t  ngx_http_cms_plans_routes[] = {

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/plan"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_plans_get, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/audit-events"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_audit_list, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_plans_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_plans_get_sql,
                                 &ctx->principal.workspace_id, 1,
                                 ngx_http_cms_plans_got);
}


static ngx_int_t
ngx_http_cms_plans_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_plan, res);
}


static ngx_int_t
ngx_http_cms_audit_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_audit_list_sql, args, 3,
                                   &ngx_http_cms_audit_event);
}
