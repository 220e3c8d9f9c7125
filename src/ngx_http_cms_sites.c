
/*
 * Sites and pages: /v1/workspaces/{id}/sites[/{siteId}[/pages...]]
 * (session).  A workspace holds one site (sql/0020_sites.sql).  A site's
 * origin is checked before anything is written: https only, no path, and
 * every address its host has (nginx's resolver, never a blocking lookup)
 * globally reachable (ngx_http_cms_outbound_allowed); else 400
 * invalid_url.  Its publishable key is made from the site's id and a
 * nonce, never stored (ngx_http_cms_crypto_publishable): only its hash.
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
#include "ngx_http_cms_crypto.h"
#include "cms_fields.h"
#include "cms_ipaddr.h"
#include "cms_url.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_SITE_ARGS   7
#define NGX_HTTP_CMS_PAGE_ARGS   9
#define NGX_HTTP_CMS_NONCE_LEN   32      /* hex of 16 random bytes */


/* a write waiting for its origin's host to resolve */
typedef struct {
    ngx_http_cms_outbound_t     out;        /* first: the check's */
    ngx_str_t                   args[NGX_HTTP_CMS_SITE_ARGS];
} ngx_http_cms_site_write_t;


static ngx_int_t ngx_http_cms_sites_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_insert(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_rotate(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sites_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_sites_write(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode, ngx_http_cms_handler_pt next);
static ngx_int_t ngx_http_cms_sites_origin(ngx_http_request_t *r,
    ngx_str_t *origin, ngx_str_t *host);
static ngx_int_t ngx_http_cms_sites_key(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *nonce, ngx_str_t *hash);
static ngx_int_t ngx_http_cms_pages_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_pages_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_pages_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_pages_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_pages_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_pages_ids(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);
static int ngx_http_cms_page_slug_valid(const char *s, size_t len);


/* the site's columns; its key from "id:nonce" (never stored) */
#define NGX_HTTP_CMS_SITE_COLUMNS                                            \
    " s.id, s.name, s.mode, s.origin, s.status,"                             \
    " s.id || ':' || s.key_nonce, s.key_created_at,"                 \
    " s.created_at, s.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_site_cols[] = {
    { "id", 0, NGX_HTTP_CMS_COL_STRING },
    { "name", 1, NGX_HTTP_CMS_COL_STRING },
    { "mode", 2, NGX_HTTP_CMS_COL_STRING },
    { "origin", 3, NGX_HTTP_CMS_COL_STRING },
    { "status", 4, NGX_HTTP_CMS_COL_STRING },
    { "publishable_key", 5, NGX_HTTP_CMS_COL_PUBLISHABLE },
    { "publishable_key_created_at", 6, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 7, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 8, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_site = {
    "site", "sites", ngx_http_cms_site_cols,
    sizeof(ngx_http_cms_site_cols) / sizeof(ngx_http_cms_col_t)
};

#define NGX_HTTP_CMS_PAGE_COLUMNS                                            \
    " p.id, p.site_id, p.slug, p.title, p.seo_title, p.seo_description,"     \
    " p.og_image, p.position, p.created_at, p.updated_at"

/* a lone page in the list's shape: the total's place kept */
#define NGX_HTTP_CMS_PAGE_ONE  " 1," NGX_HTTP_CMS_PAGE_COLUMNS

static const ngx_http_cms_col_t  ngx_http_cms_page_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "site_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "slug", 3, NGX_HTTP_CMS_COL_STRING },
    { "title", 4, NGX_HTTP_CMS_COL_STRING },
    { "seo_title", 5, NGX_HTTP_CMS_COL_STRING },
    { "seo_description", 6, NGX_HTTP_CMS_COL_STRING },
    { "og_image", 7, NGX_HTTP_CMS_COL_STRING },
    { "position", 8, NGX_HTTP_CMS_COL_NUMBER },
    { "created_at", 9, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 10, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_page = {
    "page", "pages", ngx_http_cms_page_cols,
    sizeof(ngx_http_cms_page_cols) / sizeof(ngx_http_cms_col_t)
};


static const char *const  ngx_http_cms_site_modes[] = {
    "instrumented", "rendered", NULL
};

static const char *const  ngx_http_cms_site_states[] = {
    "active", "disabled", NULL
};

/* a site's body: $3 name, $4 mode, $5 origin, $6 status */
static const char *const  ngx_http_cms_site_ignored[] = {
    "id", "publishable_key", "publishable_key_created_at", "created_at",
    "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_site_fields[] = {
    { "name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "mode", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 4, 0, 0, 0, 20,
      ngx_http_cms_site_modes, NULL, 0, NULL },
    { "origin", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 5, 0,
      NGX_HTTP_CMS_ERR_INVALID_URL, 0, CMS_URL_MAX, NULL, NULL, 0, NULL },
    { "status", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 6, 0, 0, 0, 20,
      ngx_http_cms_site_states, NULL, NGX_HTTP_CMS_ERR_INVALID_STATUS,
      NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_site_input = {
    ngx_http_cms_site_fields, ngx_http_cms_site_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

/* a page's body: $3 slug .. $8 position ($1 workspace, $2 site, $9 id) */
static const char *const  ngx_http_cms_page_ignored[] = {
    "id", "site_id", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_page_fields[] = {
    { "slug", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_SLUG_REQUIRED, 0, 1, 500,
      NULL, ngx_http_cms_page_slug_valid, NGX_HTTP_CMS_ERR_INVALID_SLUG, NULL },
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 4,
      NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0, 1, 500, NULL, NULL, 0, NULL },
    { "seo_title", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 5,
      0, 0, 0, 300, NULL, NULL, 0, NULL },
    { "seo_description", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 6,
      0, 0, 0, 1000, NULL, NULL, 0, NULL },
    { "og_image", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 7,
      0, 0, 0, CMS_URL_MAX, NULL, cms_url_http_valid,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "position", CMS_FIELD_INTEGER, CMS_FIELD_NULL_ABSENT, 8,
      0, 0, -1000000, 1000000, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_page_input = {
    ngx_http_cms_page_fields, ngx_http_cms_page_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SITE_COLUMNS " FROM sites s"
        " WHERE s.workspace_id = $1 ORDER BY s.created_at, s.id LIMIT 100",
        1);

/* $1 workspace, $2 id, $3 name, $4 mode, $5 origin, $6 nonce, $7 hash */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_insert_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SITE_COLUMNS " FROM cms_site_create($1, $2,"
        " $3, $4, $5, $6, decode($7, 'hex')) s", 7);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SITE_COLUMNS " FROM sites s"
        " WHERE s.workspace_id = $1 AND s.id = $2", 2);

/* $3 name, $4 mode, $5 origin (when $7 says it was given), $6 status */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE sites s SET name = coalesce($3, name),"
        " mode = coalesce($4, mode),"
        " origin = CASE WHEN $7::boolean THEN $5 ELSE origin END,"
        " status = coalesce($6, status), updated_at = now()"
        " WHERE s.workspace_id = $1 AND s.id = $2"
        " RETURNING" NGX_HTTP_CMS_SITE_COLUMNS, 7);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_rotate_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE sites s SET key_nonce = $3, key_hash = decode($4, 'hex'),"
        " key_created_at = now(), updated_at = now()"
        " WHERE s.workspace_id = $1 AND s.id = $2"
        " RETURNING" NGX_HTTP_CMS_SITE_COLUMNS, 4);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sites_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM sites WHERE workspace_id = $1 AND id = $2 RETURNING id",
        2);

/* the site of the workspace, or a NULL total (404): $1 ws, $2 site */
#define NGX_HTTP_CMS_PAGES_SITE                                               \
    " FROM (SELECT s.id FROM sites s WHERE s.id = $2 AND s.workspace_id = $1" \
    "  UNION ALL SELECT NULL LIMIT 1) st"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_pages_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.*" NGX_HTTP_CMS_PAGES_SITE
        " CROSS JOIN LATERAL (SELECT CASE WHEN st.id IS NULL THEN NULL"
        "  ELSE cms_record_total('pages', $1, st.id::text) END"
        "  AS total OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_PAGE_COLUMNS
        "  FROM pages p WHERE p.site_id = st.id"
        "  ORDER BY p.position, p.created_at, p.id LIMIT $3 OFFSET $4) p"
        " ON true", 4);

/* a NULL position keeps the default; no row when the site is not there */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_pages_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO pages AS p (site_id, workspace_id, slug, title,"
        " seo_title, seo_description, og_image, position)"
        " SELECT s.id, s.workspace_id, $3, $4, $5, $6, $7,"
        "  coalesce($8::integer, 0)"
        " FROM sites s WHERE s.workspace_id = $1 AND s.id = $2"
        " RETURNING" NGX_HTTP_CMS_PAGE_ONE, 8);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_pages_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_PAGE_ONE " FROM pages p"
        " WHERE p.workspace_id = $1 AND p.site_id = $2 AND p.id = $3", 3);

/* a null SEO field clears it (the patch's "given" flags $10 .. $12) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_pages_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE pages p SET slug = coalesce($3, slug),"
        " title = coalesce($4, title),"
        " seo_title = CASE WHEN $10::boolean THEN $5 ELSE seo_title END,"
        " seo_description = CASE WHEN $11::boolean THEN $6"
        "  ELSE seo_description END,"
        " og_image = CASE WHEN $12::boolean THEN $7 ELSE og_image END,"
        " position = coalesce($8::integer, position), updated_at = now()"
        " WHERE p.workspace_id = $1 AND p.site_id = $2 AND p.id = $9"
        " RETURNING" NGX_HTTP_CMS_PAGE_ONE, 12);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_pages_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM pages WHERE workspace_id = $1 AND site_id = $2"
        " AND id = $3 RETURNING id", 3);


/* members read; viewers stay read-only (README: Sites) */
ngx_http_cms_route_t  ngx_http_cms_sites_routes[] = {

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/sites"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_sites_list, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/sites"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_sites_create, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/sites/:site"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_sites_get, NULL, NULL, 0 },

    { NGX_HTTP_PATCH, ngx_string("/workspaces/:id/sites/:site"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_sites_update, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/sites/:site"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_sites_delete, NULL, NULL, 0 },

    { NGX_HTTP_POST,
      ngx_string("/workspaces/:id/sites/:site/publishable-key/rotate"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_sites_rotate, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/sites/:site/pages"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_pages_list, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/sites/:site/pages"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_pages_create, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/sites/:site/pages/:page"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_pages_get, NULL, NULL, 0 },

    { NGX_HTTP_PATCH, ngx_string("/workspaces/:id/sites/:site/pages/:page"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_pages_update, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/sites/:site/pages/:page"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_pages_delete, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* sites */

static ngx_int_t
ngx_http_cms_sites_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_list_sql,
                                 &ctx->principal.workspace_id, 1,
                                 ngx_http_cms_sites_listed);
}


static ngx_int_t
ngx_http_cms_sites_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_all(r, &ngx_http_cms_site, res);
}


static ngx_int_t
ngx_http_cms_sites_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_sites_write(r, ctx, CMS_FIELDS_CREATE,
                                    ngx_http_cms_sites_insert);
}


/* the origin passed: a new id, its key, the row */
static ngx_int_t
ngx_http_cms_sites_insert(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_site_write_t  *w = ctx->data;

    if (ngx_http_cms_crypto_uuid7(r->pool, &w->args[1]) != NGX_OK
        || ngx_http_cms_sites_key(r, &w->args[1], &w->args[5], &w->args[6])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->data = (void *) &ngx_http_cms_site;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_insert_sql, w->args,
                                 NGX_HTTP_CMS_SITE_ARGS,
                                 ngx_http_cms_row_done);
}



static ngx_int_t
ngx_http_cms_sites_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_site;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}



static ngx_int_t
ngx_http_cms_sites_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  id[2];

    rc = ngx_http_cms_path_id(r, ctx, id);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_sites_write(r, ctx, CMS_FIELDS_PATCH,
                                    ngx_http_cms_sites_save);
}


/* the origin passed: $7 says whether the body gave one (null clears) */
static ngx_int_t
ngx_http_cms_sites_save(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_site_write_t  *w = ctx->data;

    if (json_object_get(ctx->body, "origin") != NULL) {
        ngx_str_set(&w->args[6], "true");

    } else {
        ngx_str_set(&w->args[6], "false");
    }

    ctx->data = (void *) &ngx_http_cms_site;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_update_sql, w->args,
                                 NGX_HTTP_CMS_SITE_ARGS,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_sites_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_delete_sql, args, 2,
                                 ngx_http_cms_deleted_done);
}


/* a new nonce: the old key stops resolving when the row changes */
static ngx_int_t
ngx_http_cms_sites_rotate(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_cms_sites_key(r, &args[1], &args[2], &args[3]) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->data = (void *) &ngx_http_cms_site;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sites_rotate_sql, args, 4,
                                 ngx_http_cms_row_ok_done);
}


/*
 * The body into the write's arguments ($1 workspace, $2 the path's site),
 * then the origin: none, an address, or a name resolved first; next()
 * runs once it passed, from here or from the resolver's answer.
 */
/* long: the fields, then the origin's three ways */
static ngx_int_t
ngx_http_cms_sites_write(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    int mode, ngx_http_cms_handler_pt next)
{
    ngx_int_t                   rc;
    ngx_str_t                   host;
    ngx_http_cms_site_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_site_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    w->out.next = next;
    w->out.param = "origin";
    w->out.message = "origin's host has no address, or one that is not"
                     " public";
    w->args[0] = ctx->principal.workspace_id;

    if (mode == CMS_FIELDS_PATCH) {
        w->args[1] = ctx->params[0];
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_site_input, mode,
                                w->args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = w;

    if (w->args[4].data == NULL) {
        return next(r, ctx);
    }

    rc = ngx_http_cms_sites_origin(r, &w->args[4], &host);
    if (rc != NGX_DECLINED) {
        return (rc == NGX_OK) ? next(r, ctx) : rc;
    }

    return ngx_http_cms_outbound_resolve(r, &host);
}


/*
 * "origin" normalized in place (scheme://host[:port]): NGX_OK for a
 * public address, NGX_DECLINED with *host a name to resolve, or the
 * error recorded.
 */
static ngx_int_t
ngx_http_cms_sites_origin(ngx_http_request_t *r, ngx_str_t *origin,
    ngx_str_t *host)
{
    int        public;
    size_t     n;
    u_char    *out;
    cms_url_t  u;

    out = ngx_pnalloc(r->pool, CMS_URL_BUILD_SIZE(origin->len));
    if (out == NULL) {
        return NGX_ERROR;
    }

    n = cms_url_origin((char *) origin->data, origin->len, CMS_URL_HTTPS, &u,
                       (char *) out, CMS_URL_BUILD_SIZE(origin->len));
    if (n == 0) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, "origin",
                                     "origin must be https://host[:port]"
                                     " with no path");
    }

    host->data = (u_char *) origin->data + u.host.off;
    host->len = u.host.len;

    origin->data = out;
    origin->len = n;

    if (u.host_type == CMS_URL_HOST_NAME) {
        return NGX_DECLINED;
    }

    public = cms_ipaddr_text_public((char *) host->data, host->len);

    if (public != 1) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, "origin",
                                     "origin is not a public address");
    }

    return NGX_OK;
}


/* a fresh nonce for the site "id" and its key's hash, in r->pool */
static ngx_int_t
ngx_http_cms_sites_key(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *nonce, ngx_str_t *hash)
{
    u_char  *seed, *p;
    u_char   rnd[NGX_HTTP_CMS_NONCE_LEN / 2];
    u_char   key[NGX_HTTP_CMS_PK_LEN];

    seed = ngx_pnalloc(r->pool, id->len + 1 + NGX_HTTP_CMS_NONCE_LEN + 1);
    hash->data = ngx_pnalloc(r->pool, 2 * 32);

    if (seed == NULL || hash->data == NULL
        || ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the id as PostgreSQL writes it back: lowercase */
    ngx_strlow(seed, id->data, id->len);
    seed[id->len] = ':';
    p = ngx_hex_dump(seed + id->len + 1, rnd, sizeof(rnd));
    *p = '\0';

    nonce->data = seed + id->len + 1;
    nonce->len = NGX_HTTP_CMS_NONCE_LEN;

    if (ngx_http_cms_crypto_publishable(seed, p - seed, key, hash->data)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_explicit_memzero(key, sizeof(key));
    hash->len = 2 * 32;

    return NGX_OK;
}


/* pages */

static ngx_int_t
ngx_http_cms_pages_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_pages_list_sql, args, 4,
                                   &ngx_http_cms_page);
}


static ngx_int_t
ngx_http_cms_pages_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_PAGE_ARGS];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_page_input,
                                CMS_FIELDS_CREATE, args, 8);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_page;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_pages_insert_sql, args, 8,
                                 ngx_http_cms_row_done);
}



static ngx_int_t
ngx_http_cms_pages_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_pages_ids(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_page;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_pages_get_sql, args, 3,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_pages_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t    rc;
    ngx_str_t    args[12], ids[3];
    ngx_uint_t   i;

    static const char  *cleared[] = { "seo_title", "seo_description",
                                      "og_image" };

    rc = ngx_http_cms_pages_ids(r, ctx, ids);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_page_input,
                                CMS_FIELDS_PATCH, args, 8);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = ids[0];
    args[1] = ids[1];
    args[8] = ids[2];

    for (i = 0; i < 3; i++) {
        if (json_object_get(ctx->body, cleared[i]) != NULL) {
            ngx_str_set(&args[9 + i], "true");

        } else {
            ngx_str_set(&args[9 + i], "false");
        }
    }

    ctx->data = (void *) &ngx_http_cms_page;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_pages_update_sql, args, 12,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_pages_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_pages_ids(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_pages_delete_sql, args, 3,
                                 ngx_http_cms_deleted_done);
}


/* workspace, site and page ids; a malformed id is simply not found */
static ngx_int_t
ngx_http_cms_pages_ids(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)
        || !cms_uuid_valid((char *) ctx->params[1].data, ctx->params[1].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];
    args[2] = ctx->params[1];

    return NGX_OK;
}


/*
 * A page's slug: a URL path, "/" alone or "/" then segments of letters,
 * digits, "-", "_", "." and "~" joined by single "/", no trailing "/",
 * no "." or ".." segment.
 */
static int
ngx_http_cms_page_slug_valid(const char *s, size_t len)
{
    size_t  i, seg;

    if (len == 0 || s[0] != '/') {
        return 0;
    }

    if (len == 1) {
        return 1;
    }

    for (i = 1, seg = 1; i <= len; i++) {
        if (i == len || s[i] == '/') {
            if (i == seg
                || (i - seg == 1 && s[seg] == '.')
                || (i - seg == 2 && s[seg] == '.' && s[seg + 1] == '.'))
            {
                return 0;
            }

            seg = i + 1;
            continue;
        }

        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')
              || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'
              || s[i] == '.' || s[i] == '~'))
        {
            return 0;
        }
    }

    return 1;
}
