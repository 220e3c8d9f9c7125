
/*
 * Workspaces: POST /v1/workspaces (the caller becomes owner, the
 * workspace is on cms_default_plan's plan),
 * GET /v1/workspaces (the caller's), GET /v1/workspaces/{id} (a member's).
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
#include "cms_fields.h"
#include "cms_validate.h"


static ngx_int_t ngx_http_cms_workspaces_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_workspaces_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_workspaces_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_workspaces_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_workspaces_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/*
 * What every statement returns: column 0 the list's total (0 for a single
 * record, so one record table serves both), then the workspace's columns
 * and the caller's role in it.
 */
#define NGX_HTTP_CMS_WORKSPACE_COLUMNS                                       \
    " w.id, w.name, w.default_locale, w.plan, w.storage_quota_bytes,"        \
    " w.suspended, m.role, w.created_at, w.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_workspace_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "name", 2, NGX_HTTP_CMS_COL_STRING },
    { "default_locale", 3, NGX_HTTP_CMS_COL_STRING },
    { "plan", 4, NGX_HTTP_CMS_COL_STRING },
    { "storage_quota_bytes", 5, NGX_HTTP_CMS_COL_NUMBER },
    { "suspended", 6, NGX_HTTP_CMS_COL_BOOL },
    { "role", 7, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 9, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_workspace = {
    "workspace", "workspaces", ngx_http_cms_workspace_cols,
    sizeof(ngx_http_cms_workspace_cols) / sizeof(ngx_http_cms_col_t)
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_workspaces_insert_sql =
    ngx_http_cms_pg_stmt(
        "WITH w AS ("
        "  INSERT INTO workspaces (name, default_locale, plan)"
        "  VALUES ($1, coalesce($2, 'en'), cms_plan_named($4)) RETURNING *),"
        " m AS ("
        "  INSERT INTO members (workspace_id, user_id, role)"
        "  SELECT w.id, $3, 'owner' FROM w RETURNING role)"
        " SELECT 0," NGX_HTTP_CMS_WORKSPACE_COLUMNS " FROM w, m",
        4);

/* $1 the user, $2 limit, $3 offset; past the end, one row of NULLs */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_workspaces_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM members WHERE user_id = $1) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_WORKSPACE_COLUMNS
        "  FROM members m JOIN workspaces w ON w.id = m.workspace_id"
        "  WHERE m.user_id = $1"
        "  ORDER BY w.created_at, w.id LIMIT $2 OFFSET $3) p ON true",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_workspaces_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_WORKSPACE_COLUMNS
        " FROM workspaces w JOIN members m ON m.workspace_id = w.id"
        " WHERE w.id = $1 AND m.user_id = $2",
        2);


/* the body: $1 name, $2 default_locale (the same rule as an article's) */
static const char *const  ngx_http_cms_workspaces_ignored[] = {
    "id", "plan", "storage_quota_bytes", "suspended", "role", "created_at",
    "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_workspaces_fields[] = {
    { "name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 1,
      NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "default_locale", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 2, 0, 0,
      0, 35, NULL, cms_locale_valid, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_workspaces_input = {
    ngx_http_cms_workspaces_fields, ngx_http_cms_workspaces_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


ngx_http_cms_route_t  ngx_http_cms_workspaces_routes[] = {

    { NGX_HTTP_POST, ngx_string("/workspaces"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_workspaces_create, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_workspaces_list, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id"), NGX_HTTP_CMS_AUTH_MEMBER,
      NGX_HTTP_CMS_ROLE_VIEWER, ngx_http_cms_workspaces_get, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_workspaces_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                  rc;
    ngx_str_t                  args[4];
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_workspaces_input,
                                CMS_FIELDS_CREATE, args, 3);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    args[2] = ctx->principal.user_id;
    args[3] = mcf->default_plan;     /* cms_default_plan; NULL: "free" */

    return ngx_http_cms_pg_query(r, &ngx_http_cms_workspaces_insert_sql, args,
                                 4, ngx_http_cms_workspaces_created);
}


static ngx_int_t
ngx_http_cms_workspaces_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_CREATED, &ngx_http_cms_workspace,
                                 res);
}


static ngx_int_t
ngx_http_cms_workspaces_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.user_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_workspaces_list_sql, args,
                                   3, &ngx_http_cms_workspace);
}


static ngx_int_t
ngx_http_cms_workspaces_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_workspaces_get_sql, args, 2,
                                 ngx_http_cms_workspaces_got);
}


static ngx_int_t
ngx_http_cms_workspaces_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_workspace, res);
}
