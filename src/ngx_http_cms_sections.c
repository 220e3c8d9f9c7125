
/*
 * Page sections: /v1/api/pages/{pageId}/sections (secret key, pages:read
 * and pages:write) and the studio mirrors under /v1/workspaces/{id}/pages.
 * GET answers the published snapshots only; PUT replaces a draft's data
 * (optimistic, base_version), POST .../fields writes one field of it,
 * POST .../publish copies drafts into their snapshots
 * (sql/0021_sections.sql).
 *
 * Every value written is one of three shapes, checked here: a string, a
 * rich text {html} (sanitized in the thread pool's sanitize lane, as
 * article bodies are, before it is stored), or an image {src, alt} with
 * an absolute http(s) src.  Anything else is 400 invalid_field_value.
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
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_thread.h"
#include "cms_sanitize.h"
#include "cms_url.h"
#include "cms_validate.h"


#define NGX_HTTP_CMS_SECTION_KEY_MAX    100
#define NGX_HTTP_CMS_SECTION_FIELDS     100
#define NGX_HTTP_CMS_SECTION_TEXT_MAX   65536
#define NGX_HTTP_CMS_SECTION_ALT_MAX    1000
#define NGX_HTTP_CMS_SECTION_ARGS       6


/* a write on its way: the statement, its arguments, the values to clean */
typedef struct {
    ngx_http_cms_pg_stmt_t     *stmt;
    ngx_str_t                   args[NGX_HTTP_CMS_SECTION_ARGS];
    json_t                     *value;     /* becomes args[value_arg] */
    ngx_uint_t                  value_arg;
    ngx_array_t                 html;      /* ngx_http_cms_html_t */
} ngx_http_cms_section_write_t;


static ngx_int_t ngx_http_cms_sections_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sections_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_sections_put(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sections_field(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sections_publish(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_sections_published(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_sections_begin(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const cms_fields_t *t,
    ngx_http_cms_section_write_t **wp);
static ngx_int_t ngx_http_cms_sections_data(ngx_http_request_t *r,
    ngx_http_cms_section_write_t *w, json_t *data);
static ngx_int_t ngx_http_cms_sections_value(ngx_http_request_t *r,
    ngx_http_cms_section_write_t *w, json_t *v, const char *param);
static ngx_int_t ngx_http_cms_sections_refuse(ngx_http_request_t *r,
    const char *param, const char *what);
static ngx_int_t ngx_http_cms_sections_clean(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_section_write_t *w, json_t *value);
static ngx_int_t ngx_http_cms_sections_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_sections_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_section_write_t *w);
static int ngx_http_cms_section_key_valid(const char *s, size_t len);


/* the draft view, after column 0 (1, or a list's parent) */
#define NGX_HTTP_CMS_SECTION_DRAFT                                           \
    " 1, d.id, d.page_id, d.section_key, d.locale, d.data, d.version,"      \
    " d.published_version, d.published_at, d.has_unpublished_changes,"       \
    " d.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_section_draft_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "page_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "section_key", 3, NGX_HTTP_CMS_COL_STRING },
    { "locale", 4, NGX_HTTP_CMS_COL_STRING },
    { "data", 5, NGX_HTTP_CMS_COL_JSON },
    { "version", 6, NGX_HTTP_CMS_COL_NUMBER },
    { "published_version", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "published_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "has_unpublished_changes", 9, NGX_HTTP_CMS_COL_BOOL },
    { "updated_at", 10, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_section_draft = {
    "section", "sections", ngx_http_cms_section_draft_cols,
    sizeof(ngx_http_cms_section_draft_cols) / sizeof(ngx_http_cms_col_t)
};

/* the published view: the snapshot, never the draft */
static const ngx_http_cms_col_t  ngx_http_cms_section_published_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "page_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "section_key", 3, NGX_HTTP_CMS_COL_STRING },
    { "locale", 4, NGX_HTTP_CMS_COL_STRING },
    { "data", 5, NGX_HTTP_CMS_COL_JSON },
    { "version", 6, NGX_HTTP_CMS_COL_NUMBER },
    { "published_at", 7, NGX_HTTP_CMS_COL_TIME },
};

const ngx_http_cms_record_t  ngx_http_cms_section_published = {
    "section", "sections", ngx_http_cms_section_published_cols,
    sizeof(ngx_http_cms_section_published_cols) / sizeof(ngx_http_cms_col_t)
};


/* PUT: $3 section_key, $4 locale; data and base_version read by hand */
static const char *const  ngx_http_cms_section_put_own[] = {
    "data", "base_version", NULL
};

/* a key-like field (section_key, section, field) as $n; "flags", the
   "missing" code (0: the table's) */
#define NGX_HTTP_CMS_SECTION_KEY(name, flags, n, missing)                    \
    { name, CMS_FIELD_STRING, flags, n, missing, 0, 1,                       \
      NGX_HTTP_CMS_SECTION_KEY_MAX, NULL, ngx_http_cms_section_key_valid, 0, \
      NULL }

/* locale as $4, optional: the workspace's default when absent */
#define NGX_HTTP_CMS_SECTION_LOCALE                                          \
    { "locale", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 4, 0, 0, 2, 35,     \
      NULL, cms_locale_valid, 0, NULL }

#define NGX_HTTP_CMS_SECTION_INPUT(fields, own)                              \
    { fields, own,                                                           \
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,      \
      NGX_HTTP_CMS_ERR_INVALID_FIELD, NGX_HTTP_CMS_ERR_INVALID_FIELD }

#define NGX_HTTP_CMS_SECTION_NEEDED  (CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY)

static const cms_field_t  ngx_http_cms_section_put_fields[] = {
    NGX_HTTP_CMS_SECTION_KEY("section_key", NGX_HTTP_CMS_SECTION_NEEDED, 3,
                             NGX_HTTP_CMS_ERR_SECTION_KEY_REQUIRED),
    NGX_HTTP_CMS_SECTION_LOCALE,
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_section_put_input =
    NGX_HTTP_CMS_SECTION_INPUT(ngx_http_cms_section_put_fields,
                               ngx_http_cms_section_put_own);

/* fields: $3 section, $4 locale, $5 field; the value read by hand */
static const char *const  ngx_http_cms_section_field_own[] = {
    "value", NULL
};

static const cms_field_t  ngx_http_cms_section_field_fields[] = {
    NGX_HTTP_CMS_SECTION_KEY("section", NGX_HTTP_CMS_SECTION_NEEDED, 3, 0),
    NGX_HTTP_CMS_SECTION_LOCALE,
    NGX_HTTP_CMS_SECTION_KEY("field", NGX_HTTP_CMS_SECTION_NEEDED, 5, 0),
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_section_field_input =
    NGX_HTTP_CMS_SECTION_INPUT(ngx_http_cms_section_field_fields,
                               ngx_http_cms_section_field_own);

/* publish: $3 section_key, $4 locale, both optional (null: all) */
static const cms_field_t  ngx_http_cms_section_publish_fields[] = {
    NGX_HTTP_CMS_SECTION_KEY("section_key", CMS_FIELD_NULL_ABSENT, 3, 0),
    NGX_HTTP_CMS_SECTION_LOCALE,
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_section_publish_input =
    NGX_HTTP_CMS_SECTION_INPUT(ngx_http_cms_section_publish_fields, NULL);



/*
 * The page's published sections in a locale (the workspace's default
 * unless given): column 0 the page's site, NULL when the page is not the
 * workspace's (404); one row with NULL sections when none is published.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sections_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT pg.site, s.* FROM"
        " (SELECT p.site_id AS site, w.default_locale AS locale"
        "   FROM pages p JOIN workspaces w ON w.id = p.workspace_id"
        "  WHERE p.id = $2 AND p.workspace_id = $1"
        "  UNION ALL SELECT NULL, NULL LIMIT 1) pg"
        NGX_HTTP_CMS_PUBLISHED_SECTIONS("$2") " ON pg.site IS NOT NULL",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sections_put_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SECTION_DRAFT
        " FROM cms_section_save($1, $2, $3, $4, NULL, $5::jsonb,"
        "  $6::integer) s"
        " CROSS JOIN LATERAL cms_section_draft(s) d", 6);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sections_field_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SECTION_DRAFT
        " FROM cms_section_save($1, $2, $3, $4, $5, $6::jsonb, NULL) s"
        " CROSS JOIN LATERAL cms_section_draft(s) d", 6);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_sections_publish_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SECTION_DRAFT
        " FROM cms_section_publish($1, $2, $3, $4) s"
        " CROSS JOIN LATERAL cms_section_draft(s) d"
        " ORDER BY d.section_key, d.locale", 4);


/* viewers read; authors write drafts; publishing is an editor's */
ngx_http_cms_route_t  ngx_http_cms_sections_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/pages/:id/sections"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SCOPE_PAGES_READ,
      ngx_http_cms_sections_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PUT, ngx_string("/api/pages/:id/sections"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SCOPE_PAGES_WRITE,
      ngx_http_cms_sections_put, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_POST, ngx_string("/api/pages/:id/sections/fields"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SCOPE_PAGES_WRITE,
      ngx_http_cms_sections_field, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_POST, ngx_string("/api/pages/:id/sections/publish"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SCOPE_PAGES_WRITE,
      ngx_http_cms_sections_publish, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_sections_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_query_arg(r, "locale", 64, &args[2]);

    if (rc == NGX_OK && !cms_locale_valid((char *) args[2].data, args[2].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sections_list_sql, args, 3,
                                 ngx_http_cms_sections_listed);
}


static ngx_int_t
ngx_http_cms_sections_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_under(r, &ngx_http_cms_section_published,
                                        res);
}


/* PUT: {section_key, data?, locale?, base_version?} */
static ngx_int_t
ngx_http_cms_sections_put(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t                        *data, *base;
    ngx_int_t                      rc;
    json_int_t                     n;
    ngx_http_cms_section_write_t  *w;

    rc = ngx_http_cms_sections_begin(r, ctx, &ngx_http_cms_section_put_input,
                                     &w);
    if (rc != NGX_OK) {
        return rc;
    }

    w->stmt = &ngx_http_cms_sections_put_sql;
    w->value_arg = 4;

    base = json_object_get(ctx->body, "base_version");

    if (base != NULL && !json_is_null(base)) {
        n = json_is_integer(base) ? json_integer_value(base) : -1;

        if (n < 0 || n > NGX_MAX_INT32_VALUE) {
            return ngx_http_cms_sections_refuse(r, "base_version",
                                                "a whole number or null");
        }

        w->args[5].data = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
        if (w->args[5].data == NULL) {
            return NGX_ERROR;
        }

        w->args[5].len = ngx_sprintf(w->args[5].data, "%L", (int64_t) n)
                         - w->args[5].data;
    }

    data = json_object_get(ctx->body, "data");

    if (data == NULL || json_is_null(data)) {
        return ngx_http_cms_sections_save(r, ctx, w);
    }

    rc = ngx_http_cms_sections_data(r, w, data);

    return rc == NGX_OK ? ngx_http_cms_sections_clean(r, ctx, w, data) : rc;
}


/* POST .../fields: {section, field, value, locale?} */
static ngx_int_t
ngx_http_cms_sections_field(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t                        *value;
    ngx_int_t                      rc;
    ngx_http_cms_section_write_t  *w;

    rc = ngx_http_cms_sections_begin(r, ctx,
                                     &ngx_http_cms_section_field_input, &w);
    if (rc != NGX_OK) {
        return rc;
    }

    w->stmt = &ngx_http_cms_sections_field_sql;
    w->value_arg = 5;

    value = json_object_get(ctx->body, "value");

    if (value == NULL) {
        return ngx_http_cms_sections_refuse(r, "value",
                                            "a string, {html} or {src, alt}");
    }

    rc = ngx_http_cms_sections_value(r, w, value, "value");

    return rc == NGX_OK ? ngx_http_cms_sections_clean(r, ctx, w, value) : rc;
}


/* POST .../publish: {section_key?, locale?} */
static ngx_int_t
ngx_http_cms_sections_publish(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    /* no body: every section with changes, in every locale */
    ngx_str_null(&args[2]);
    ngx_str_null(&args[3]);

    rc = ctx->body ? ngx_http_cms_json_read(r, ctx->body,
                                            &ngx_http_cms_section_publish_input,
                                            CMS_FIELDS_CREATE, args, 4)
                   : NGX_OK;
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_sections_publish_sql, args,
                                 4, ngx_http_cms_sections_published);
}


static ngx_int_t
ngx_http_cms_sections_published(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_all(r, &ngx_http_cms_section_draft, res);
}


/* the write's state, the path's page and the body's plain fields */
static ngx_int_t
ngx_http_cms_sections_begin(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    const cms_fields_t *t, ngx_http_cms_section_write_t **wp)
{
    ngx_int_t                      rc;
    ngx_http_cms_section_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_section_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    if (ngx_array_init(&w->html, r->pool, 4,
                       sizeof(ngx_http_cms_html_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_path_id(r, ctx, w->args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, t, CMS_FIELDS_CREATE, w->args,
                                NGX_HTTP_CMS_SECTION_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    *wp = w;

    return NGX_OK;
}


/*
 * A PUT's data: an object of at most NGX_HTTP_CMS_SECTION_FIELDS members
 * whose keys follow the key rule, each value checked as a field's.
 */
static ngx_int_t
ngx_http_cms_sections_data(ngx_http_request_t *r,
    ngx_http_cms_section_write_t *w, json_t *data)
{
    json_t      *m;
    ngx_int_t    rc;
    const char  *key;

    if (!json_is_object(data)
        || json_object_size(data) > NGX_HTTP_CMS_SECTION_FIELDS)
    {
        return ngx_http_cms_sections_refuse(r, "data", "an object of at"
                                            " most 100 fields");
    }

    json_object_foreach(data, key, m) {
        if (!ngx_http_cms_section_key_valid(key, ngx_strlen(key))) {
            return ngx_http_cms_sections_refuse(r, "data", "an object whose"
                                                " keys are 1-100 of"
                                                " [A-Za-z0-9_.-]");
        }

        rc = ngx_http_cms_sections_value(r, w, m, "data");
        if (rc != NGX_OK) {
            return rc;
        }
    }

    return NGX_OK;
}


/*
 * A field's value: a string, an {html} (queued for the sanitizer) or an
 * {src, alt} with an absolute http(s) src; else invalid_field_value
 * naming "param".
 */
static ngx_int_t
ngx_http_cms_sections_value(ngx_http_request_t *r,
    ngx_http_cms_section_write_t *w, json_t *v, const char *param)
{
    json_t                       *m, *src, *alt;
    ngx_http_cms_html_t  *h;

    if (json_is_string(v)) {
        return json_string_length(v) <= NGX_HTTP_CMS_SECTION_TEXT_MAX
               ? NGX_OK
               : ngx_http_cms_sections_refuse(r, param, "at most 65536"
                                              " bytes of text");
    }

    m = json_object_get(v, "html");

    if (json_is_object(v) && json_object_size(v) == 1 && json_is_string(m)) {
        if (json_string_length(m) > CMS_SANITIZE_MAX_INPUT) {
            return ngx_http_cms_sections_refuse(r, param, "{html} of at most"
                                                " 512 KiB");
        }

        h = ngx_array_push(&w->html);
        if (h == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(h, sizeof(ngx_http_cms_html_t));
        h->tag = v;
        h->in = json_string_value(m);
        h->in_len = json_string_length(m);

        return NGX_OK;
    }

    src = json_object_get(v, "src");
    alt = json_object_get(v, "alt");

    if (json_is_object(v) && json_is_string(src)
        && json_object_size(v) == 1 + (alt != NULL)
        && cms_url_http_valid(json_string_value(src), json_string_length(src))
        && (alt == NULL
            || (json_is_string(alt)
                && json_string_length(alt) <= NGX_HTTP_CMS_SECTION_ALT_MAX)))
    {
        return NGX_OK;
    }

    return ngx_http_cms_sections_refuse(r, param, "a string, {html} or"
                                        " {src, alt} with an absolute"
                                        " http(s) src");
}


static ngx_int_t
ngx_http_cms_sections_refuse(ngx_http_request_t *r, const char *param,
    const char *what)
{
    u_char  msg[128];

    *ngx_snprintf(msg, sizeof(msg) - 1, "%s must be %s", param, what) = '\0';

    return ngx_http_cms_fail_copy(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, param,
                                  (char *) msg);
}


/* "value" checked: its {html} values through the sanitizer, then saved */
static ngx_int_t
ngx_http_cms_sections_clean(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_section_write_t *w, json_t *value)
{
    ngx_int_t  rc;

    w->value = value;

    if (w->html.nelts == 0) {
        return ngx_http_cms_sections_save(r, ctx, w);
    }

    /* at most cms_sanitize_jobs run, cms_sanitize_queue wait: 503 beyond */
    rc = ngx_http_cms_thread_html(r, &w->html,
                                  ngx_http_cms_sections_sanitized, w);

    if (rc == NGX_BUSY) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
}


/* back on the event loop: each {html} replaced by its clean copy */
static ngx_int_t
ngx_http_cms_sections_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_section_write_t *w = data;

    json_t                       *clean;
    ngx_uint_t                    i;
    ngx_http_cms_html_t  *h;

    h = w->html.elts;

    for (i = 0; i < w->html.nelts; i++) {
        if (h[i].rc != CMS_SANITIZE_OK) {
            return ngx_http_cms_sections_refuse(r, "html", "HTML the"
                                                " sanitizer can read (too"
                                                " large or too deep)");
        }

        clean = json_stringn(h[i].out, h[i].out_len);

        if (clean == NULL
            || json_object_set_new(h[i].tag, "html", clean) != 0)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_cms_sections_save(r, ctx, w);
}


/* the value as JSON text into its argument, then the statement */
static ngx_int_t
ngx_http_cms_sections_save(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_section_write_t *w)
{
    if (w->value != NULL
        && ngx_http_cms_json_dump(r, w->value, &w->args[w->value_arg])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->data = (void *) &ngx_http_cms_section_draft;

    return ngx_http_cms_pg_query(r, w->stmt, w->args,
                                 NGX_HTTP_CMS_SECTION_ARGS,
                                 ngx_http_cms_row_ok_done);
}


/* a section key or a field name: 1-100 of [A-Za-z0-9_.-] */
static int
ngx_http_cms_section_key_valid(const char *s, size_t len)
{
    size_t  i;

    if (len == 0 || len > NGX_HTTP_CMS_SECTION_KEY_MAX) {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')
              || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'
              || s[i] == '.'))
        {
            return 0;
        }
    }

    return 1;
}
