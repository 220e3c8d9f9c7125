
/*
 * Categories: /v1/api/categories (secret key) and their studio mirrors
 * under /v1/workspaces/{id}/categories (session); one handler each for
 * both.  Input through one field table (cms_fields), answers written from
 * columns (the list unpaginated as the spec says, bounded at
 * NGX_HTTP_CMS_CATEGORIES_MAX rows).
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
#include "cms_text.h"
#include "cms_uuid.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_CATEGORY_ARGS     9
#define NGX_HTTP_CMS_CATEGORIES_MAX    "1000"


static ngx_int_t ngx_http_cms_categories_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_categories_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_categories_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_categories_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_categories_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_categories_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_categories_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_categories_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_categories_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode, ngx_str_t *args);
static ngx_int_t ngx_http_cms_categories_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);


/* what every statement returns: the columns of ngx_http_cms_category */
#define NGX_HTTP_CMS_CATEGORY_COLUMNS                                        \
    " c.id, c.name, c.slug, c.description, c.accent_color, c.image_url,"     \
    " c.locale, c.display_order, c.created_at, c.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_category_cols[] = {
    { "id", 0, NGX_HTTP_CMS_COL_STRING },
    { "name", 1, NGX_HTTP_CMS_COL_STRING },
    { "slug", 2, NGX_HTTP_CMS_COL_STRING },
    { "description", 3, NGX_HTTP_CMS_COL_STRING },
    { "accent_color", 4, NGX_HTTP_CMS_COL_STRING },
    { "image_url", 5, NGX_HTTP_CMS_COL_STRING },
    { "locale", 6, NGX_HTTP_CMS_COL_STRING },
    { "display_order", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "created_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 9, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_category = {
    "category", "categories", ngx_http_cms_category_cols,
    sizeof(ngx_http_cms_category_cols) / sizeof(ngx_http_cms_col_t)
};


/* the body: $2 name .. $8 display_order ($1 the workspace, $9 the id) */
static const char *const  ngx_http_cms_category_ignored[] = {
    "id", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_category_fields[] = {
    { "name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 2,
      NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "slug", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 3,
      0, NGX_HTTP_CMS_ERR_INVALID_SLUG, 0, 1000, NULL, cms_slug_valid,
      0, NULL },
    { "description", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 4,
      0, 0, 0, 5000, NULL, NULL, 0, NULL },
    { "accent_color", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 5,
      0, 0, 0, 7, NULL, cms_color_valid, 0, NULL },
    /* "" is the default a record reads back with */
    { "image_url", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 6,
      0, 0, 0, CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "locale", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 7,
      0, 0, 0, 35, NULL, cms_locale_valid, 0, NULL },
    { "display_order", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 8,
      0, 0, -1000000, 1000000, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_category_input = {
    ngx_http_cms_category_fields, ngx_http_cms_category_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* a NULL keeps the default (insert) or the current value (update) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO categories AS c (workspace_id, name, slug, description,"
        " accent_color, image_url, locale, display_order)"
        " VALUES ($1, $2, $3, coalesce($4, ''), coalesce($5, '#8b5cf6'),"
        "  coalesce($6, ''), coalesce($7, 'en'), coalesce($8::integer, 0))"
        " RETURNING" NGX_HTTP_CMS_CATEGORY_COLUMNS,
        8);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE categories AS c SET name = coalesce($2, name),"
        " slug = coalesce($3, slug),"
        " description = coalesce($4, description),"
        " accent_color = coalesce($5, accent_color),"
        " image_url = coalesce($6, image_url),"
        " locale = coalesce($7, locale),"
        " display_order = coalesce($8::integer, display_order),"
        " updated_at = now()"
        " WHERE c.workspace_id = $1 AND c.id = $9"
        " RETURNING" NGX_HTTP_CMS_CATEGORY_COLUMNS,
        9);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_CATEGORY_COLUMNS
        " FROM categories c WHERE c.workspace_id = $1"
        " ORDER BY c.display_order, c.name, c.id"
        " LIMIT " NGX_HTTP_CMS_CATEGORIES_MAX,
        1);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_CATEGORY_COLUMNS " FROM categories c"
        " WHERE c.workspace_id = $1 AND c.id = $2",
        2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM categories WHERE workspace_id = $1 AND id = $2"
        " RETURNING id",
        2);


#define NGX_HTTP_CMS_CAT_READ   NGX_HTTP_CMS_SCOPE_CATEGORIES_READ
#define NGX_HTTP_CMS_CAT_WRITE  NGX_HTTP_CMS_SCOPE_CATEGORIES_WRITE


ngx_http_cms_route_t  ngx_http_cms_categories_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/categories"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CAT_READ,
      ngx_http_cms_categories_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/categories"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CAT_WRITE,
      ngx_http_cms_categories_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_GET, ngx_string("/api/categories/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CAT_READ,
      ngx_http_cms_categories_get, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/categories/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CAT_WRITE,
      ngx_http_cms_categories_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_DELETE, ngx_string("/api/categories/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CAT_WRITE,
      ngx_http_cms_categories_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_categories_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_categories_list_sql,
                                 &ctx->principal.workspace_id, 1,
                                 ngx_http_cms_categories_listed);
}


static ngx_int_t
ngx_http_cms_categories_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_all(r, &ngx_http_cms_category, res);
}


static ngx_int_t
ngx_http_cms_categories_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_CATEGORY_ARGS];

    rc = ngx_http_cms_categories_read(r, ctx, CMS_FIELDS_CREATE, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_categories_insert_sql, args,
                                 8, ngx_http_cms_categories_created);
}


static ngx_int_t
ngx_http_cms_categories_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_CREATED, &ngx_http_cms_category,
                                 res);
}


static ngx_int_t
ngx_http_cms_categories_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_categories_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_categories_get_sql, args, 2,
                                 ngx_http_cms_categories_got);
}


static ngx_int_t
ngx_http_cms_categories_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_CATEGORY_ARGS], id[2];

    rc = ngx_http_cms_categories_id(r, ctx, id);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_categories_read(r, ctx, CMS_FIELDS_PATCH, args);
    if (rc != NGX_OK) {
        return rc;
    }

    args[8] = id[1];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_categories_update_sql, args,
                                 9, ngx_http_cms_categories_got);
}


static ngx_int_t
ngx_http_cms_categories_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_category, res);
}


static ngx_int_t
ngx_http_cms_categories_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_categories_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_categories_delete_sql, args,
                                 2, ngx_http_cms_deleted_done);
}


/* workspace and category id; a malformed id is simply not found */
static ngx_int_t
ngx_http_cms_categories_id(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];

    return NGX_OK;
}


/* the body into $1..$8 (args[0..7]); a new category's slug from its name */
static ngx_int_t
ngx_http_cms_categories_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    int mode, ngx_str_t *args)
{
    ngx_int_t  rc;

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_category_input,
                                mode, args, 8);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_json_slug(r, &args[2], mode == CMS_FIELDS_CREATE
                                               ? &args[1] : NULL);
}
