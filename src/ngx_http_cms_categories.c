
/*
 * Categories: /v1/api/categories (secret key) and the studio mirrors under
 * /v1/workspaces/{id}/categories (session); one handler each for both.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "cms_validate.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_CATEGORY_ARGS     9


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
static ngx_int_t ngx_http_cms_categories_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_categories_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t create, ngx_str_t *args);
static ngx_int_t ngx_http_cms_categories_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);


/*
 * $1 workspace, $2 name, $3 slug, $4 description, $5 accent_color,
 * $6 image_url, $7 locale, $8 display_order, $9 id (updates); a NULL
 * keeps the default or the current value.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO categories AS c (workspace_id, name, slug, description,"
        " accent_color, image_url, locale, display_order)"
        " VALUES ($1, $2, $3, coalesce($4, ''), coalesce($5, '#8b5cf6'),"
        "  coalesce($6, ''), coalesce($7, 'en'), coalesce($8::integer, 0))"
        " RETURNING cms_category_json(c)::text",
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
        " RETURNING cms_category_json(c)::text",
        9);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT coalesce(json_agg(cms_category_json(c)"
        "  ORDER BY c.display_order, c.name, c.id), '[]')::text"
        " FROM categories c WHERE c.workspace_id = $1",
        1);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_categories_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_category_json(c)::text FROM categories c"
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

    return ngx_http_cms_send_wrapped(r, NGX_HTTP_OK, "categories", res);
}


static ngx_int_t
ngx_http_cms_categories_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_CATEGORY_ARGS];

    rc = ngx_http_cms_categories_read(r, ctx, 1, args);
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

    return ngx_http_cms_send_wrapped(r, NGX_HTTP_CREATED, "category", res);
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

    rc = ngx_http_cms_categories_read(r, ctx, 0, args);
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

    return ngx_http_cms_send_wrapped(r, NGX_HTTP_OK, "category", res);
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
                                 2, ngx_http_cms_categories_deleted);
}


static ngx_int_t
ngx_http_cms_categories_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  empty = ngx_null_string;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
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


/* the body into statement arguments $1..$8 (args[0..7]) */
/* long: one check per category field, in order */
static ngx_int_t
ngx_http_cms_categories_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t create, ngx_str_t *args)
{
    u_char      *p;
    json_t      *order;
    ngx_int_t    rc;
    ngx_uint_t   i;

    static const char  *fields[] = { "name", "slug", "description",
                                     "accent_color", "image_url", "locale",
                                     "display_order", NULL };
    static const char  *ignored[] = { "id", "created_at", "updated_at",
                                      NULL };
    static const char  *strings[] = { "name", "slug", "description",
                                      "accent_color", "image_url", "locale" };
    static size_t       max[] = { 200, 1000, 5000, 7, 2048, 35 };

    rc = ngx_http_cms_json_fields(r, ctx->body, fields, ignored);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = ctx->principal.workspace_id;

    for (i = 0; i < 6; i++) {
        rc = ngx_http_cms_json_string(r, ctx->body, strings[i],
                                      (i == 0 && create)
                                      ? NGX_HTTP_CMS_ERR_NAME_REQUIRED : 0,
                                      max[i], &args[i + 1]);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (args[1].data != NULL && args[1].len == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NAME_REQUIRED, "name");
    }

    rc = ngx_http_cms_json_slug(r, &args[2], create ? &args[1] : NULL);
    if (rc != NGX_OK) {
        return rc;
    }

    if (args[4].data != NULL && !cms_color_valid((char *) args[4].data,
                                                 args[4].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                 "accent_color");
    }

    if (args[6].data != NULL && !cms_locale_valid((char *) args[6].data,
                                                  args[6].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    ngx_str_null(&args[7]);
    order = json_object_get(ctx->body, "display_order");

    if (order != NULL && !json_is_null(order)) {
        if (!json_is_integer(order) || json_integer_value(order) < -1000000
            || json_integer_value(order) > 1000000)
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "display_order");
        }

        p = ngx_pnalloc(r->pool, NGX_INT64_LEN);
        if (p == NULL) {
            return NGX_ERROR;
        }

        args[7].data = p;
        args[7].len = ngx_sprintf(p, "%L", (int64_t) json_integer_value(order))
                      - p;
    }

    return NGX_OK;
}
