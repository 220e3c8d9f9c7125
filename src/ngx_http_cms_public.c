
/*
 * The publishable-key surface, /v1/public (DESIGN.md, Public surface):
 * read-only, published content only, for browsers behind a CDN.  Its own
 * steps (the router's public family): CORS first (so that every answer,
 * a 401 or a 429 too, can be read by the page that asked), the key
 * (?key= for CDN-cacheable URLs, or Authorization: Bearer), the rate
 * limit per site and client address, then the handler, which counts a
 * request that reaches PostgreSQL against the site's ceiling.  Every 200
 * carries a strong ETag (a matching If-None-Match is 304), Cache-Control
 * (cms_public_cache_control; private, with Vary: Authorization, when the
 * key came in a header) and Surrogate-Key / Cache-Tag naming the site and
 * the page.
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
#include "ngx_http_cms_public.h"
#include "ngx_http_cms_public_cache.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_ratelimit.h"
#include "cms_key.h"
#include "cms_uuid.h"
#include "cms_validate.h"


static ngx_int_t ngx_http_cms_public_auth_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_public_known(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_public_site_t *site);
static ngx_int_t ngx_http_cms_public_cached(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_site(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_pages(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_sections(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_by_path(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_entries(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_entry(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_page(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);
static ngx_int_t ngx_http_cms_public_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_public_tag(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *page);
static ngx_int_t ngx_http_cms_public_preflight(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_public_ceiling(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* an active site by its key's hash: id, workspace, origin, version */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_key_sql =
    ngx_http_cms_pg_stmt(
        "SELECT s.id, s.workspace_id, s.origin, s.content_version"
        " FROM sites s"
        " JOIN workspaces w ON w.id = s.workspace_id AND NOT w.suspended"
        " WHERE s.key_hash = decode($1, 'hex') AND s.status = 'active'", 1);

static const ngx_http_cms_col_t  ngx_http_cms_public_site_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "name", 2, NGX_HTTP_CMS_COL_STRING },
    { "mode", 3, NGX_HTTP_CMS_COL_STRING },
    { "origin", 4, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_public_site_rec = {
    "site", "sites", ngx_http_cms_public_site_cols,
    sizeof(ngx_http_cms_public_site_cols) / sizeof(ngx_http_cms_col_t)
};

static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_site_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 1, s.id, s.name, s.mode, s.origin FROM sites s"
        " WHERE s.id = $1", 1);

static const ngx_http_cms_col_t  ngx_http_cms_public_page_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "slug", 2, NGX_HTTP_CMS_COL_STRING },
    { "title", 3, NGX_HTTP_CMS_COL_STRING },
    { "seo_title", 4, NGX_HTTP_CMS_COL_STRING },
    { "seo_description", 5, NGX_HTTP_CMS_COL_STRING },
    { "og_image", 6, NGX_HTTP_CMS_COL_STRING },
    { "position", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "updated_at", 8, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_public_page_rec = {
    "page", "pages", ngx_http_cms_public_page_cols,
    sizeof(ngx_http_cms_public_page_cols) / sizeof(ngx_http_cms_col_t)
};

/* a site's pages in their order, at most 1000 (it is a site map) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_pages_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 1, p.id, p.slug, p.title, p.seo_title, p.seo_description,"
        " p.og_image, p.position, p.updated_at FROM pages p"
        " WHERE p.site_id = $1"
        " ORDER BY p.position, p.created_at, p.id LIMIT 1000", 1);

/* a published entry of an enabled module, after column 0 */
static const ngx_http_cms_col_t  ngx_http_cms_public_entry_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "data", 2, NGX_HTTP_CMS_COL_JSON },
    { "created_at", 3, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 4, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_public_entry_rec = {
    "custom_entry", "custom_entries", ngx_http_cms_public_entry_cols,
    sizeof(ngx_http_cms_public_entry_cols) / sizeof(ngx_http_cms_col_t)
};

/* the workspace's enabled module "slug" ($1, $2), on a plan with them */
#define NGX_HTTP_CMS_PUBLIC_MODULE                                           \
    " m.workspace_id = $1 AND m.slug = $2 AND m.enabled"                     \
    " AND cms_custom_modules_allowed($1)"

#define NGX_HTTP_CMS_PUBLIC_ENTRY                                            \
    " c.id, c.data, c.created_at, c.updated_at"

/* a page of published entries, newest first, the total from the module's
   counters (sql/0044); a NULL total: no module */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_entries_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, e.* FROM (SELECT m.id AS mid,"
        "  cms_record_total_of('entries', $1, m.id, 'published') AS total"
        "  FROM custom_modules m WHERE" NGX_HTTP_CMS_PUBLIC_MODULE
        "  UNION ALL SELECT NULL, NULL LIMIT 1 OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_PUBLIC_ENTRY
        "  FROM custom_entries c WHERE c.module_id = t.mid"
        "   AND c.status = 'published'"
        "  ORDER BY c.created_at DESC, c.id DESC LIMIT $3 OFFSET $4) e"
        " ON true", 4);

/*
 * The published entries searched (docs/search.md): $1 .. $4 as above,
 * $5 the query, read in the workspace's language; no module: 404.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_search_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_SEARCH(
        "(SELECT m.id AS mid, m.schema, w.default_locale AS locale"
        "  FROM custom_modules m JOIN workspaces w ON w.id = m.workspace_id"
        "  WHERE" NGX_HTTP_CMS_PUBLIC_MODULE ") l",
        "custom_entries c", "c",
        "c.module_id = s.mid AND c.status = 'published'",
        "c.search_title", NGX_HTTP_CMS_PUBLIC_ENTRY,
        "cms_entry_text(c.data, s.schema)", "$5", "$3", "$4"), 5);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_entry_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 1," NGX_HTTP_CMS_PUBLIC_ENTRY " FROM custom_modules m"
        " JOIN custom_entries c ON c.module_id = m.id AND c.id = $3::uuid"
        "  AND c.status = 'published'"
        " WHERE" NGX_HTTP_CMS_PUBLIC_MODULE, 3);


/*
 * A page of the key's site ($1 site, $2 the page's id or $4 its slug, $3
 * a locale or the workspace's default): column 0 the page's id, NULL when
 * the site has no such page (404); then its published sections.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_public_sections_sql =
    ngx_http_cms_pg_stmt(
        "SELECT pg.id, s.* FROM"
        " (SELECT p.id, w.default_locale AS locale FROM pages p"
        "   JOIN workspaces w ON w.id = p.workspace_id"
        "  WHERE p.site_id = $1"
        "   AND (p.id = $2::uuid OR (p.slug = $4 AND $2::uuid IS NULL))"
        "  UNION ALL SELECT NULL, NULL LIMIT 1) pg"
        NGX_HTTP_CMS_PUBLISHED_SECTIONS("pg.id") " ON pg.id IS NOT NULL",
        4);


/* GET (and HEAD) only; OPTIONS is the router's preflight */
ngx_http_cms_route_t  ngx_http_cms_public_routes[] = {

    { NGX_HTTP_GET, ngx_string("/public/site"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_site, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/public/pages"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_pages, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/public/pages/:id/sections"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_sections, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/public/sections"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_by_path, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/public/custom/:slug/entries"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_entries, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/public/custom/:slug/entries/:id"),
      NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY, 0,
      ngx_http_cms_public_entry, NULL, NULL, 0 },

    ngx_http_cms_null_route
};

/* what the router runs for OPTIONS on a public route's path (no pattern:
   it is never matched, and scripts/routes does not list it) */
ngx_http_cms_route_t  ngx_http_cms_public_preflight_route = {
    NGX_HTTP_OPTIONS, ngx_null_string, NGX_HTTP_CMS_AUTH_NONE, 0,
    ngx_http_cms_public_preflight, NULL, NULL, 0
};


/* the family's first step: answers from here on are cacheable and CORS */
ngx_int_t
ngx_http_cms_public_begin(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_set(&ctx->cors, "*");
    ctx->cacheable = 1;

    return NGX_DECLINED;
}


/*
 * The publishable key: ?key= (a URL a CDN can cache on its own) or the
 * Bearer token, pk_live_ with a valid checksum, then the active site
 * whose key hash it is.  The site's origin, when set, becomes the only
 * origin CORS allows.
 */
ngx_int_t
ngx_http_cms_public_auth(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                    rc;
    ngx_str_t                    key, hex, *given;
    ngx_http_cms_public_site_t   site;

    rc = ngx_http_cms_query_arg(r, "key", 128, &key);

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    given = (rc == NGX_OK) ? &key : NULL;
    ctx->key_in_header = (given == NULL);

    rc = ngx_http_cms_auth_hash(r, ctx, given, CMS_KEY_KIND_PK_LIVE,
                                CMS_KEY_KIND_PK_LIVE, &hex);
    if (rc != NGX_OK) {
        return rc;
    }

    /* a key this host resolved within cms_public_cache's valid= */
    rc = ngx_http_cms_public_cache_site(r, &hex, &site);

    if (rc != NGX_DECLINED) {
        return rc == NGX_OK ? ngx_http_cms_public_known(r, ctx, &site) : rc;
    }

    ctx->public_key = hex;
    ctx->public_gen = ngx_http_cms_public_cache_gen(r);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_public_key_sql, &hex, 1,
                                 ngx_http_cms_public_auth_done);
}


static ngx_int_t
ngx_http_cms_public_auth_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                    rc, i;
    ngx_str_t                   *out[3];
    ngx_http_cms_public_site_t   site;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1) {
        if (ngx_http_cms_pg_missed(r)) {
            /* a key made a moment ago may not be on the replica yet */
            return ngx_http_cms_pg_query(r, &ngx_http_cms_public_key_sql,
                                         &ctx->public_key, 1,
                                         ngx_http_cms_public_auth_done);
        }

        ngx_http_cms_public_cache_site_drop(r, &ctx->public_key);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_API_KEY, NULL);
    }

    out[0] = &site.site_id;
    out[1] = &site.workspace_id;
    out[2] = &site.origin;

    for (i = 0; i < 3; i++) {
        out[i]->len = PQgetlength(res, 0, i);
        out[i]->data = ngx_pnalloc(r->pool, out[i]->len + 1);

        if (out[i]->data == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(out[i]->data, PQgetvalue(res, 0, i), out[i]->len);
    }

    site.version = (uint64_t) ngx_atoof((u_char *) PQgetvalue(res, 0, 3),
                                        PQgetlength(res, 0, 3));

    ngx_http_cms_public_cache_site_put(r, &ctx->public_key, &site,
                                       ctx->public_gen);

    return ngx_http_cms_public_known(r, ctx, &site);
}


/* the key's site: the principal, CORS, the surrogate keys; then on */
static ngx_int_t
ngx_http_cms_public_known(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_public_site_t *site)
{
    ngx_int_t                  rc;
    ngx_http_cms_principal_t  *p;

    p = &ctx->principal;
    p->site_id = site->site_id;
    p->workspace_id = site->workspace_id;

    /* the rate limit's bucket is the site's: a rotated key keeps it */
    p->key_id = p->site_id;

    if (site->origin.len) {
        ctx->cors = site->origin;
    }

    ctx->public_version = site->version;
    ngx_str_null(&ctx->public_key);

    rc = ngx_http_cms_public_tag(r, ctx, NULL);

    return rc == NGX_OK ? ctx->resume(r, ctx) : rc;
}


static ngx_int_t
ngx_http_cms_public_site(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (!ctx->counted) {
        return ngx_http_cms_public_ceiling(r, ctx);
    }

    ctx->data = (void *) &ngx_http_cms_public_site_rec;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_public_site_sql,
                                 &ctx->principal.site_id, 1,
                                 ngx_http_cms_row_ok_done);
}


static ngx_int_t
ngx_http_cms_public_pages(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (!ctx->counted) {
        return ngx_http_cms_public_ceiling(r, ctx);
    }

    ctx->data = (void *) &ngx_http_cms_public_page_rec;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_public_pages_sql,
                                 &ctx->principal.site_id, 1,
                                 ngx_http_cms_public_listed);
}


/* GET /public/pages/{id}/sections?locale= */
static ngx_int_t
ngx_http_cms_public_sections(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.site_id;
    args[1] = ctx->params[0];
    ngx_str_null(&args[3]);

    rc = ngx_http_cms_public_tag(r, ctx, &ctx->params[0]);

    return rc == NGX_OK ? ngx_http_cms_public_page(r, ctx, args) : rc;
}


/* GET /public/sections?path=/about&locale=: the page with that slug */
static ngx_int_t
ngx_http_cms_public_by_path(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    args[0] = ctx->principal.site_id;
    ngx_str_null(&args[1]);

    rc = ngx_http_cms_query_arg(r, "path", 500, &args[3]);

    if (rc == NGX_DECLINED || (rc == NGX_OK && args[3].len == 0)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "path");
    }

    return rc == NGX_OK ? ngx_http_cms_public_page(r, ctx, args) : rc;
}


/* a page's published sections: args[2] the ?locale= (checked here) */
static ngx_int_t
ngx_http_cms_public_page(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_query_arg(r, "locale", 64, &args[2]);

    if (rc == NGX_OK && !cms_locale_valid((char *) args[2].data, args[2].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_public_cached(r, ctx);

    if (rc != NGX_DECLINED) {
        return rc;
    }

    if (!ctx->counted) {
        return ngx_http_cms_public_ceiling(r, ctx);
    }

    ctx->data = (void *) &ngx_http_cms_section_published;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_public_sections_sql, args,
                                 4, ngx_http_cms_public_listed);
}


/*
 * A section read is what the site's content version, the site and the
 * request line make it: its strong ETag says so without the body, a
 * matching If-None-Match is a 304 without the database, and the body kept
 * under that key in cms_public_cache is answered again as it is.  Else
 * NGX_DECLINED: the database is asked, and the body kept on the way out
 * (ngx_http_cms_cache_headers()).
 */
/* long: the key and ETag, then the two ways around the database */
static ngx_int_t
ngx_http_cms_public_cached(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char           *p;
    size_t            len;
    uint32_t          crc;
    ngx_int_t         rc;
    ngx_str_t         body, tags, *etag, *key;
    ngx_table_elt_t  *inm;

    key = &ctx->public_key;
    etag = &ctx->etag;

    len = ctx->principal.site_id.len + 2 * NGX_INT64_LEN + r->uri.len
          + 1 + r->args.len;

    key->data = ngx_pnalloc(r->pool, len);
    etag->data = ngx_pnalloc(r->pool, 2 + NGX_INT64_LEN + 1 + 8);

    if (key->data == NULL || etag->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(key->data, "%V %uL %V?%V", &ctx->principal.site_id,
                    ctx->public_version, &r->uri, &r->args);
    key->len = p - key->data;

    crc = ngx_crc32_long(key->data, key->len);
    p = ngx_sprintf(etag->data, "\"%uL-%08xD\"", ctx->public_version, crc);
    etag->len = p - etag->data;

    rc = ngx_http_cms_public_cache_body(r, key, &tags, &body);

    if (rc == NGX_OK) {
        /* the page a read by path found is in the keys kept with it */
        ctx->surrogate = tags;
        return ngx_http_cms_send_written(r, NGX_HTTP_OK, &body);
    }

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    /*
     * exactly this ETag, and no other condition: nginx's not-modified
     * filter turns the 200 into a 304, so no body is needed
     */
    inm = r->headers_in.if_none_match;

    if (inm != NULL && r->headers_in.if_modified_since == NULL
        && r->headers_in.if_match == NULL
        && r->headers_in.if_unmodified_since == NULL
        && ((inm->value.len == etag->len
             && ngx_strncmp(inm->value.data, etag->data, etag->len) == 0)
            || (inm->value.len == etag->len + 2
                && ngx_strncmp(inm->value.data, "W/", 2) == 0
                && ngx_strncmp(inm->value.data + 2, etag->data, etag->len)
                   == 0)))
    {
        ngx_str_null(key);
        ngx_str_null(&body);

        /*
         * a read by path knows its page only from the query: a 304's
         * fields replace what a cache keeps, so none rather than the site
         * alone (the page's purge would then miss it)
         */
        if (ctx->route->handler == ngx_http_cms_public_by_path) {
            ngx_str_null(&ctx->surrogate);
        }

        return ngx_http_cms_send_written(r, NGX_HTTP_OK, &body);
    }

    return NGX_DECLINED;
}


/* GET /public/custom/{slug}/entries: published, paged like every list */
static ngx_int_t
ngx_http_cms_public_entries(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[5];

    if (!ctx->counted) {
        return ngx_http_cms_public_ceiling(r, ctx);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];

    rc = ngx_http_cms_list_search_arg(r, &args[4]);

    if (rc == NGX_OK) {
        return ngx_http_cms_list_search(r, &ngx_http_cms_public_search_sql,
                                        args, 5,
                                        &ngx_http_cms_public_entry_rec,
                                        &args[4]);
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_public_entries_sql, args,
                                   4, &ngx_http_cms_public_entry_rec);
}


/* GET /public/custom/{slug}/entries/{id}: a draft is not found */
static ngx_int_t
ngx_http_cms_public_entry(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    if (!cms_uuid_valid((char *) ctx->params[1].data, ctx->params[1].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (!ctx->counted) {
        return ngx_http_cms_public_ceiling(r, ctx);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];
    args[2] = ctx->params[1];

    ctx->data = (void *) &ngx_http_cms_public_entry_rec;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_public_entry_sql, args, 3,
                                 ngx_http_cms_row_ok_done);
}


/*
 * a list: a page's sections (its column 0 NULL: no such page) or pages;
 * a read by path learns its page here, before the headers go
 */
static ngx_int_t
ngx_http_cms_public_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  page;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ctx->data != &ngx_http_cms_section_published) {
        return ngx_http_cms_list_send_all(r, ctx->data, res);
    }

    if (ctx->route->handler == ngx_http_cms_public_by_path
        && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
    {
        page.data = (u_char *) PQgetvalue(res, 0, 0);
        page.len = PQgetlength(res, 0, 0);

        if (ngx_http_cms_public_tag(r, ctx, &page) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return ngx_http_cms_list_send_under(r, ctx->data, res);
}


/* Surrogate-Key / Cache-Tag: "site-<id>", and " page-<id>" for a page's;
   "page" is copied */
static ngx_int_t
ngx_http_cms_public_tag(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *page)
{
    u_char  *p;
    size_t   len;

    len = sizeof("site-") - 1 + ctx->principal.site_id.len;

    if (page != NULL) {
        len += sizeof(" page-") - 1 + page->len;
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ctx->surrogate.data = p;
    p = ngx_sprintf(p, "site-%V", &ctx->principal.site_id);

    if (page != NULL) {
        p = ngx_sprintf(p, " page-%V", page);
    }

    ctx->surrogate.len = p - ctx->surrogate.data;

    return NGX_OK;
}


/*
 * The site's ceiling (cms_public_site_limit) counts the requests that reach
 * PostgreSQL, not those the public cache or a 304 answers: a handler about
 * to ask it returns this first, and runs again from its start once the
 * request is let through.
 */
static ngx_int_t
ngx_http_cms_public_ceiling(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ctx->counted = 1;

    return ngx_http_cms_ratelimit_site(r, ctx, ctx->route->handler);
}


/* OPTIONS: any origin may ask; the GET's own answer names the site's */
static ngx_int_t
ngx_http_cms_public_preflight(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_uint_t  i;
    ngx_str_t   empty = ngx_null_string;

    static ngx_str_t  headers[][2] = {
        { ngx_string("Access-Control-Allow-Methods"),
          ngx_string("GET, HEAD, OPTIONS") },
        { ngx_string("Access-Control-Allow-Headers"),
          ngx_string("Authorization, If-None-Match") },
        { ngx_string("Access-Control-Max-Age"), ngx_string("600") },
    };

    ngx_str_set(&ctx->cors, "*");

    for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
        if (ngx_http_cms_header_add(r, &headers[i][0], &headers[i][1])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_cms_send_written(r, NGX_HTTP_NO_CONTENT, &empty);
}
