
/*
 * Custom modules: /v1/workspaces/{id}/custom-modules (session; members
 * read, owners and admins write).  A module's schema is checked by
 * cms_custom_schema_check() and stored in its normal form; the plan
 * check, slugs and the rebuild of sort rows after a schema change are
 * cms_custom_module_save()'s (sql/0011_custom.sql).  Deleting a module
 * deletes its entries.
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
#include "cms_custom.h"
#include "cms_fields.h"
#include "cms_text.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_CUSTOM_MODULE_ARGS  7


static ngx_int_t ngx_http_cms_custom_modules_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_custom_modules_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_custom_modules_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_custom_modules_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_custom_modules_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode);
static ngx_int_t ngx_http_cms_custom_modules_saved(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_custom_modules_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_custom_modules_schema(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *arg);


#define NGX_HTTP_CMS_CUSTOM_MODULE_COLUMNS                                   \
    " m.id, m.workspace_id, m.slug, m.name, m.tagline, m.schema,"            \
    " m.enabled, m.created_at, m.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_custom_module_cols[] = {
    { "id", 0, NGX_HTTP_CMS_COL_STRING },
    { "workspace_id", 1, NGX_HTTP_CMS_COL_STRING },
    { "slug", 2, NGX_HTTP_CMS_COL_STRING },
    { "name", 3, NGX_HTTP_CMS_COL_STRING },
    { "tagline", 4, NGX_HTTP_CMS_COL_STRING },
    { "schema", 5, NGX_HTTP_CMS_COL_JSON },
    { "enabled", 6, NGX_HTTP_CMS_COL_BOOL },
    { "created_at", 7, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 8, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_custom_module = {
    "custom_module", "custom_modules", ngx_http_cms_custom_module_cols,
    sizeof(ngx_http_cms_custom_module_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * The body: $3 slug .. $5 tagline, $7 enabled; $1 the workspace, $2 the
 * module (NULL: a new one), $6 the schema, read by hand (it is checked
 * by cms_custom_schema_check(), not by a table).
 */
static const char *const  ngx_http_cms_custom_module_ignored[] = {
    "id", "workspace_id", "schema", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_custom_module_fields[] = {
    { "slug", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_SLUG_REQUIRED, 0, 1, 1000, NULL, cms_slug_valid,
      NGX_HTTP_CMS_ERR_INVALID_SLUG, NULL },
    { "name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 4,
      NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "tagline", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 5, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    { "enabled", CMS_FIELD_BOOLEAN, 0, 7, 0, 0, 0, 0, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_custom_module_input = {
    ngx_http_cms_custom_module_fields, ngx_http_cms_custom_module_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_custom_modules_save_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_CUSTOM_MODULE_COLUMNS
        " FROM cms_custom_module_save($1, $2, $3, $4, $5, $6::jsonb,"
        "  $7::boolean) m",
        7);

/* a workspace's modules: bounded, unpaginated as the spec says */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_custom_modules_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_CUSTOM_MODULE_COLUMNS
        " FROM custom_modules m WHERE m.workspace_id = $1"
        " ORDER BY m.created_at, m.id LIMIT 1000",
        1);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_custom_modules_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM custom_modules WHERE workspace_id = $1 AND id = $2"
        " RETURNING id",
        2);


ngx_http_cms_route_t  ngx_http_cms_custom_modules_routes[] = {

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/custom-modules"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_custom_modules_list, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/custom-modules"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_custom_modules_create, NULL, NULL, 0 },

    { NGX_HTTP_PATCH, ngx_string("/workspaces/:id/custom-modules/:module"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_custom_modules_update, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/custom-modules/:module"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_custom_modules_delete, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_custom_modules_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_custom_modules_list_sql,
                                 &ctx->principal.workspace_id, 1,
                                 ngx_http_cms_custom_modules_listed);
}


static ngx_int_t
ngx_http_cms_custom_modules_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_all(r, &ngx_http_cms_custom_module, res);
}


static ngx_int_t
ngx_http_cms_custom_modules_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_custom_modules_save(r, ctx, CMS_FIELDS_CREATE);
}


static ngx_int_t
ngx_http_cms_custom_modules_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_custom_modules_save(r, ctx, CMS_FIELDS_PATCH);
}


static ngx_int_t
ngx_http_cms_custom_modules_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_CUSTOM_MODULE_ARGS];

    args[0] = ctx->principal.workspace_id;
    ngx_str_null(&args[1]);

    if (mode == CMS_FIELDS_PATCH) {
        args[1] = ctx->params[0];
    }

    ngx_str_null(&args[5]);

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_custom_module_input, mode,
                                args, NGX_HTTP_CMS_CUSTOM_MODULE_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_custom_modules_schema(r, ctx, &args[5]);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_custom_modules_save_sql,
                                 args, NGX_HTTP_CMS_CUSTOM_MODULE_ARGS,
                                 ngx_http_cms_custom_modules_saved);
}


/* the schema given (null: no fields), checked, in its normal form */
static ngx_int_t
ngx_http_cms_custom_modules_schema(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *arg)
{
    int                  rc;
    json_t              *in, *norm;
    cms_custom_error_t   err;

    in = json_object_get(ctx->body, "schema");
    if (in == NULL) {
        return NGX_OK;
    }

    rc = cms_custom_schema_check(in, &norm, &err);

    if (rc == CMS_CUSTOM_REFUSED) {
        return ngx_http_cms_fail_copy(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                      err.path, err.message);
    }

    if (rc != CMS_CUSTOM_OK || ngx_http_cms_json_pool(r, norm) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_json_dump(r, norm, arg);
}


static ngx_int_t
ngx_http_cms_custom_modules_saved(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, ctx->nparams ? NGX_HTTP_OK
                                                        : NGX_HTTP_CREATED,
                                 &ngx_http_cms_custom_module, res);
}


static ngx_int_t
ngx_http_cms_custom_modules_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_custom_modules_delete_sql,
                                 args, 2,
                                 ngx_http_cms_deleted_done);
}

