
/*
 * Custom entries: /v1/api/custom/{slug}/entries (secret key, custom:read
 * and custom:write) and the studio mirrors under
 * /v1/workspaces/{id}/custom/{slug}/entries (members read, drafts
 * included; authors and up write).
 *
 * A write is two statements: the module (its schema, as of its
 * updated_at) with the entry a PATCH changes, then, once the data is
 * checked against that schema in C (cms_custom_data_check) and its
 * richtext fields went through the articles' sanitizer in the thread
 * lane, cms_custom_entry_save() (sql/0011_custom.sql), which refuses a
 * module changed in between, checks media against the workspace's
 * assets and writes the outbox event.  A read is one statement; which
 * module, and whether the plan and the module allow it, is decided by
 * cms_custom_module() in SQL.
 *
 * Lists take filter[<key>]=<value> (equality; for a multiselect, holds
 * the value) and sort=<key> or -<key>, answered from the GIN index on
 * data and from custom_entry_sort's index.
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
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "cms_custom.h"
#include "cms_fields.h"
#include "cms_query.h"
#include "cms_sanitize.h"
#include "cms_uuid.h"
#include "cms_validate.h"


/* how many filter[...] a list takes */
#define NGX_HTTP_CMS_ENTRIES_FILTERS  10




/* a write between its steps */
typedef struct {
    ngx_str_t                   args[6];    /* cms_custom_entry_save() */
    json_t                     *given;      /* the body's data, or NULL */
    json_t                     *patch;      /* the members kept */
    ngx_array_t                 html;       /* ngx_http_cms_html_t */
    ngx_uint_t                  create;
} ngx_http_cms_entry_write_t;


static ngx_int_t ngx_http_cms_entries_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_search(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t f);
static ngx_int_t ngx_http_cms_entries_filters(ngx_http_request_t *r,
    ngx_str_t *arg);
static ngx_int_t ngx_http_cms_entries_filter(ngx_http_request_t *r,
    json_t *obj, u_char *name, size_t nlen, u_char *val, size_t vlen);
static ngx_int_t ngx_http_cms_entries_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_entries_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_write(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t create);
static ngx_int_t ngx_http_cms_entries_module(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_entries_check(ngx_http_request_t *r,
    ngx_http_cms_entry_write_t *w, PGresult *res);
static ngx_int_t ngx_http_cms_entries_richtext(ngx_http_request_t *r,
    ngx_http_cms_entry_write_t *w, json_t *schema);
static ngx_int_t ngx_http_cms_entries_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_entries_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_saved(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_entries_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_entries_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static void ngx_http_cms_entries_path(ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args);
static ngx_int_t ngx_http_cms_entries_load(ngx_http_request_t *r,
    PGresult *res, int col, json_t **out);




/* an entry's columns after one leading column (the total, or the module) */
#define NGX_HTTP_CMS_ENTRY_COLUMNS                                            \
    " e.id, e.workspace_id, e.module_id, e.data, e.status,"                   \
    " e.created_at, e.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_entry_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "workspace_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "module_id", 3, NGX_HTTP_CMS_COL_STRING },
    { "data", 4, NGX_HTTP_CMS_COL_JSON },
    { "status", 5, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 6, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 7, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_entry = {
    "custom_entry", "custom_entries", ngx_http_cms_entry_cols,
    sizeof(ngx_http_cms_entry_cols) / sizeof(ngx_http_cms_col_t)
};


/* the body: status into $6; data is read by hand (the schema's) */
static const char *const  ngx_http_cms_entry_statuses[] = {
    "draft", "published", NULL
};

static const char *const  ngx_http_cms_entry_ignored[] = {
    "id", "workspace_id", "module_id", "data", "created_at", "updated_at",
    NULL
};

static const cms_field_t  ngx_http_cms_entry_fields[] = {
    { "status", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 6, 0, 0, 0, 20,
      ngx_http_cms_entry_statuses, NULL, NGX_HTTP_CMS_ERR_INVALID_STATUS,
      NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_entry_input = {
    ngx_http_cms_entry_fields, ngx_http_cms_entry_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/*
 * A list: $1 workspace, $2 slug, $3 limit, $4 offset, then the raw
 * filter (jsonb) and the sort key when the variant takes them.  "x" says
 * what the page reads: the filter's containment (x.f) and the sort key
 * (x.k), made once from the module's schema by the SQL functions that
 * refuse an unknown key.  Past the end, one row of NULLs.  The OFFSET 0
 * fences keep x and t from being flattened into the page: the filter is
 * then made once, not once a row, and the total counted once, not once
 * an item (78 ms -> 0.5 ms for a page of 20 of 10,000 entries).
 */
#define NGX_HTTP_CMS_ENTRIES_LIST(f, k, total, page)                          \
    "SELECT t.total, p.* FROM (SELECT m.id AS mid, x.f, x.k,"                 \
    "  " total " AS total"                                                    \
    "  FROM cms_custom_module($1, $2) m"                                      \
    "  CROSS JOIN LATERAL (SELECT " f " AS f, " k " AS k OFFSET 0) x"         \
    "  OFFSET 0) t"                                                           \
    " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_ENTRY_COLUMNS page              \
    "  LIMIT $3 OFFSET $4) p ON true"

#define NGX_HTTP_CMS_ENTRIES_NO_F    "NULL::jsonb"
#define NGX_HTTP_CMS_ENTRIES_F       "cms_custom_filter(m.schema, $5::jsonb)"
#define NGX_HTTP_CMS_ENTRIES_NO_K    "NULL::text"
#define NGX_HTTP_CMS_ENTRIES_K(n)    "cms_custom_sort_key(m.schema, " n ")"
/* the total: the module's counters (sql/0044), or what the filter matches */
#define NGX_HTTP_CMS_ENTRIES_ALL                                              \
    "cms_record_total_of('entries', $1, m.id, NULL)"
#define NGX_HTTP_CMS_ENTRIES_MATCHED                                          \
    "(SELECT count(*) FROM custom_entries e"                                  \
    "  WHERE e.module_id = m.id AND e.data @> x.f)"
#define NGX_HTTP_CMS_ENTRIES_PWHERE  " AND e.data @> t.f"

#define NGX_HTTP_CMS_ENTRIES_NEWEST(w)                                        \
    " FROM custom_entries e WHERE e.module_id = t.mid" w                      \
    " ORDER BY e.created_at DESC, e.id DESC"

#define NGX_HTTP_CMS_ENTRIES_SORTED(w, dir)                                   \
    " FROM custom_entry_sort s JOIN custom_entries e ON e.id = s.entry_id"    \
    " WHERE s.module_id = t.mid AND s.key = t.k" w                            \
    " ORDER BY s.num" dir ", s.txt" dir ", s.entry_id" dir

/* [filter][order]: newest first, by a key ascending, descending */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_list_sql[2][3] = {
    {
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_NO_F, NGX_HTTP_CMS_ENTRIES_NO_K,
            NGX_HTTP_CMS_ENTRIES_ALL,
            NGX_HTTP_CMS_ENTRIES_NEWEST("")), 4),
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_NO_F, NGX_HTTP_CMS_ENTRIES_K("$5"),
            NGX_HTTP_CMS_ENTRIES_ALL,
            NGX_HTTP_CMS_ENTRIES_SORTED("", "")), 5),
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_NO_F, NGX_HTTP_CMS_ENTRIES_K("$5"),
            NGX_HTTP_CMS_ENTRIES_ALL,
            NGX_HTTP_CMS_ENTRIES_SORTED("", " DESC")), 5)
    },
    {
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_F, NGX_HTTP_CMS_ENTRIES_NO_K,
            NGX_HTTP_CMS_ENTRIES_MATCHED,
            NGX_HTTP_CMS_ENTRIES_NEWEST(NGX_HTTP_CMS_ENTRIES_PWHERE)), 5),
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_F, NGX_HTTP_CMS_ENTRIES_K("$6"),
            NGX_HTTP_CMS_ENTRIES_MATCHED,
            NGX_HTTP_CMS_ENTRIES_SORTED(NGX_HTTP_CMS_ENTRIES_PWHERE, "")), 6),
        ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ENTRIES_LIST(
            NGX_HTTP_CMS_ENTRIES_F, NGX_HTTP_CMS_ENTRIES_K("$6"),
            NGX_HTTP_CMS_ENTRIES_MATCHED,
            NGX_HTTP_CMS_ENTRIES_SORTED(NGX_HTTP_CMS_ENTRIES_PWHERE,
                                        " DESC")), 6)
    }
};

/*
 * The list searched (docs/search.md): $1 workspace, $2 slug, $3 limit,
 * $4 offset, $5 the raw filter or NULL, $6 the query, read in the
 * workspace's language; ranked, so it takes no sort.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_search_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_SEARCH(
        "(SELECT m.id AS mid, m.schema, w.default_locale AS locale,"
        "   CASE WHEN $5::jsonb IS NOT NULL"
        "    THEN cms_custom_filter(m.schema, $5::jsonb) END AS f"
        "  FROM cms_custom_module($1, $2) m"
        "  JOIN workspaces w ON w.id = m.workspace_id) l",
        "custom_entries e", "e",
        "e.module_id = s.mid AND (s.f IS NULL OR e.data @> s.f)",
        "e.search_title", NGX_HTTP_CMS_ENTRY_COLUMNS,
        "cms_entry_text(e.data, s.schema)", "$6", "$3", "$4"), 6);

/* $1 workspace, $2 slug, $3 entry (NULL when malformed: not found) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT m.id," NGX_HTTP_CMS_ENTRY_COLUMNS
        " FROM cms_custom_module($1, $2) m"
        " LEFT JOIN custom_entries e ON e.module_id = m.id"
        "  AND e.id = $3::uuid",
        3);

/* the module a write checks against, with the entry a PATCH changes */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_module_sql =
    ngx_http_cms_pg_stmt(
        "SELECT m.id, m.schema::text, m.updated_at::text, e.data::text"
        " FROM cms_custom_module($1, $2) m"
        " LEFT JOIN custom_entries e ON e.module_id = m.id"
        "  AND e.id = $3::uuid",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_save_sql =
    ngx_http_cms_pg_stmt(
        "SELECT e.module_id," NGX_HTTP_CMS_ENTRY_COLUMNS
        " FROM cms_custom_entry_save($1, $2, $3, $4, $5::jsonb, $6) e",
        6);

/* the module is checked even when the id names nothing */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_entries_delete_sql =
    ngx_http_cms_pg_stmt(
        "WITH m AS MATERIALIZED (SELECT id FROM cms_custom_module($1, $2)),"
        " d AS (DELETE FROM custom_entries e"
        "  WHERE e.module_id = (SELECT id FROM m) AND e.id = $3::uuid"
        "  RETURNING e.id)"
        " SELECT (SELECT id FROM m), (SELECT id FROM d)",
        3);


#define NGX_HTTP_CMS_CUSTOM_READ   NGX_HTTP_CMS_SCOPE_CUSTOM_READ
#define NGX_HTTP_CMS_CUSTOM_WRITE  NGX_HTTP_CMS_SCOPE_CUSTOM_WRITE


ngx_http_cms_route_t  ngx_http_cms_entries_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/custom/:slug/entries"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CUSTOM_READ,
      ngx_http_cms_entries_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/custom/:slug/entries"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CUSTOM_WRITE,
      ngx_http_cms_entries_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_GET, ngx_string("/api/custom/:slug/entries/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CUSTOM_READ,
      ngx_http_cms_entries_get, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/custom/:slug/entries/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CUSTOM_WRITE,
      ngx_http_cms_entries_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_DELETE, ngx_string("/api/custom/:slug/entries/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_CUSTOM_WRITE,
      ngx_http_cms_entries_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    ngx_http_cms_null_route
};


/* reads */

/* long: the page, the filters and the sort pick one of six statements */
static ngx_int_t
ngx_http_cms_entries_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t             rc;
    ngx_str_t             args[6], sort;
    ngx_uint_t            n, f, k;
    ngx_http_cms_page_t  *page;

    ngx_http_cms_entries_path(ctx, args);

    page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (page == NULL) {
        return NGX_ERROR;
    }

    page->rec = &ngx_http_cms_entry;
    page->no_limit = 1;
    ctx->data = page;

    rc = ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                NGX_HTTP_CMS_LIST_MAX, page, &args[2]);
    if (rc != NGX_OK) {
        return rc;
    }

    n = 4;
    f = 0;

    rc = ngx_http_cms_entries_filters(r, &args[4]);

    if (rc == NGX_OK) {
        f = 1;
        n++;

    } else if (rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_list_search_arg(r, &args[5]);

    if (rc == NGX_OK) {
        return ngx_http_cms_entries_search(r, ctx, args, f);
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    k = 0;

    rc = ngx_http_cms_query_arg(r, "sort", 1 + CMS_CUSTOM_KEY_MAX, &sort);

    if (rc == NGX_OK) {
        k = 1;

        if (sort.len && sort.data[0] == '-') {
            k = 2;
            sort.data++;
            sort.len--;
        }

        args[n++] = sort;

    } else if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_list_sql[f][k],
                                 args, n, ngx_http_cms_list_done);
}


/* the list searched: args as the list read them, the filter's SQL NULL
   when there is none ("f" 0); a sort is refused (the rank orders) */
static ngx_int_t
ngx_http_cms_entries_search(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args, ngx_uint_t f)
{
    ngx_str_t             sort;
    ngx_int_t             rc;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_query_arg(r, "sort", 1 + CMS_CUSTOM_KEY_MAX, &sort);

    if (rc == NGX_OK) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "sort", "a search is ranked: sort"
                                     " cannot be given with q");
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    if (!f) {
        ngx_str_null(&args[4]);
    }

    page = ctx->data;
    page->search = 1;
    page->base = 1;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_search_sql, args, 6,
                                 ngx_http_cms_list_done);
}


/*
 * The filter[<key>]=<value> parameters as one JSON object (key -> text)
 * in *arg: NGX_OK, NGX_DECLINED when there is none, the 400 recorded
 * (a malformed or repeated one, too many), or NGX_ERROR.  Names are
 * percent-decoded ("filter%5Bx%5D" is "filter[x]").
 */
static ngx_int_t
ngx_http_cms_entries_filters(ngx_http_request_t *r, ngx_str_t *arg)
{
    u_char     *p, *last, *amp, *eq, *buf;
    size_t      nlen;
    json_t     *obj;
    ngx_int_t   rc;

    obj = json_object();
    if (obj == NULL || ngx_http_cms_json_pool(r, obj) != NGX_OK) {
        return NGX_ERROR;
    }

    buf = ngx_pnalloc(r->pool, r->args.len + 1);
    if (buf == NULL) {
        return NGX_ERROR;
    }

    p = r->args.data;
    last = p + r->args.len;

    for ( /* void */ ; p < last; p = amp + 1) {
        amp = ngx_strlchr(p, last, '&');
        amp = amp ? amp : last;
        eq = ngx_strlchr(p, amp, '=');
        eq = eq ? eq : amp;

        nlen = cms_query_decode((char *) p, eq - p, (char *) buf);

        if (nlen == CMS_QUERY_BAD_ESCAPE || nlen < 8
            || ngx_strncmp(buf, "filter[", 7) != 0)
        {
            continue;
        }

        rc = ngx_http_cms_entries_filter(r, obj, buf, nlen,
                                         eq < amp ? eq + 1 : amp,
                                         eq < amp ? amp - eq - 1 : 0);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (json_object_size(obj) == 0) {
        return NGX_DECLINED;
    }

    return ngx_http_cms_json_dump(r, obj, arg);
}


/* one filter: "filter[<key>]" (nlen bytes, decoded) and its raw value */
static ngx_int_t
ngx_http_cms_entries_filter(ngx_http_request_t *r, json_t *obj,
    u_char *name, size_t nlen, u_char *val, size_t vlen)
{
    char    *key, *v;
    size_t   klen, len;
    json_t  *s;

    key = (char *) name + 7;
    klen = nlen - 8;

    if (name[nlen - 1] != ']' || klen == 0 || klen > CMS_CUSTOM_KEY_MAX
        || !cms_utf8_valid(key, klen))
    {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "filter", "A filter is written "
                                     "filter[<field key>]=<value>");
    }

    key[klen] = '\0';

    if (json_object_get(obj, key) != NULL
        || json_object_size(obj) == NGX_HTTP_CMS_ENTRIES_FILTERS)
    {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     "filter", "A filter is repeated, or "
                                     "there are more than 10");
    }

    v = ngx_pnalloc(r->pool, vlen + 1);
    if (v == NULL) {
        return NGX_ERROR;
    }

    len = cms_query_decode((char *) val, vlen, v);

    if (len == CMS_QUERY_BAD_ESCAPE || len > CMS_CUSTOM_TEXT_MAX
        || !cms_utf8_valid(v, len))
    {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     "filter", "A filter's value is "
                                     "malformed, too long or not UTF-8");
    }

    s = json_stringn(v, len);

    if (s == NULL || json_object_set_new(obj, key, s) != 0) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_entries_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    ngx_http_cms_entries_path(ctx, args);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_get_sql, args, 3,
                                 ngx_http_cms_entries_got);
}


static ngx_int_t
ngx_http_cms_entries_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1 || PQgetisnull(res, 0, 1)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_entry, res);
}


/* writes */

static ngx_int_t
ngx_http_cms_entries_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_entries_write(r, ctx, 1);
}


static ngx_int_t
ngx_http_cms_entries_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_entries_write(r, ctx, 0);
}


static ngx_int_t
ngx_http_cms_entries_write(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t create)
{
    ngx_int_t                    rc;
    ngx_str_t                    path[3];
    ngx_http_cms_entry_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_entry_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    ctx->data = w;
    w->create = create;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_entry_input,
                                create ? CMS_FIELDS_CREATE
                                       : CMS_FIELDS_PATCH,
                                w->args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    w->given = json_object_get(ctx->body, "data");

    if (json_is_null(w->given)) {
        w->given = NULL;
    }

    if (w->given != NULL && !json_is_object(w->given)) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "data", "data must be an object");
    }

    ngx_http_cms_entries_path(ctx, path);

    if (!create && path[2].data == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    w->args[0] = path[0];
    w->args[3] = path[2];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_module_sql, path,
                                 3, ngx_http_cms_entries_module);
}


/* the module and its schema came: check the data, then sanitize or save */
static ngx_int_t
ngx_http_cms_entries_module(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                    rc;
    ngx_http_cms_entry_write_t  *w;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    w = ctx->data;

    if (PQntuples(res) != 1 || PQnfields(res) != 4
        || (!w->create && PQgetisnull(res, 0, 3)))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    rc = ngx_http_cms_entries_check(r, w, res);
    if (rc != NGX_OK) {
        return rc;
    }

    if (w->html.nelts == 0) {
        return ngx_http_cms_entries_save(r, ctx);
    }

    /* at most cms_sanitize_jobs run, cms_sanitize_queue wait: 503 beyond */
    rc = ngx_http_cms_thread_html(r, &w->html,
                                  ngx_http_cms_entries_sanitized, w);

    if (rc == NGX_BUSY) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
}


/*
 * The data given over the stored data (a PATCH) against the schema; the
 * members kept go to w->patch, the module and its version to the save's
 * arguments, the richtext values to w->html.
 */
static ngx_int_t
ngx_http_cms_entries_check(ngx_http_request_t *r,
    ngx_http_cms_entry_write_t *w, PGresult *res)
{
    json_t              *schema, *current;
    cms_custom_error_t   err;

    if (ngx_http_cms_entries_load(r, res, 1, &schema) != NGX_OK
        || ngx_http_cms_entries_load(r, res, 3, &current) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (cms_custom_data_check(schema, current, w->given, &err)
        != CMS_CUSTOM_OK)
    {
        return ngx_http_cms_fail_copy(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                      err.path, err.message);
    }

    if (cms_custom_data_keep(schema, w->given, &w->patch) != CMS_CUSTOM_OK
        || ngx_http_cms_json_pool(r, w->patch) != NGX_OK)
    {
        return NGX_ERROR;
    }

    w->args[1].data = (u_char *) PQgetvalue(res, 0, 0);
    w->args[1].len = PQgetlength(res, 0, 0);
    w->args[2].data = (u_char *) PQgetvalue(res, 0, 2);
    w->args[2].len = PQgetlength(res, 0, 2);

    /* the result is cleared when this continuation returns */
    w->args[1].data = ngx_pstrdup(r->pool, &w->args[1]);
    w->args[2].data = ngx_pstrdup(r->pool, &w->args[2]);

    if (w->args[1].data == NULL || w->args[2].data == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_cms_entries_richtext(r, w, schema);
}


/* the richtext values given: each goes through the sanitizer */
static ngx_int_t
ngx_http_cms_entries_richtext(ngx_http_request_t *r,
    ngx_http_cms_entry_write_t *w, json_t *schema)
{
    int                         type;
    json_t                     *v;
    const char                 *key;
    ngx_http_cms_html_t  *h;

    if (ngx_array_init(&w->html, r->pool, 2,
                       sizeof(ngx_http_cms_html_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    json_object_foreach(w->patch, key, v) {
        if (!json_is_string(v)
            || cms_custom_field(schema, key, ngx_strlen(key), &type) == NULL
            || type != CMS_CUSTOM_RICHTEXT)
        {
            continue;
        }

        h = ngx_array_push(&w->html);
        if (h == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(h, sizeof(ngx_http_cms_html_t));
        h->tag = (void *) key;
        h->in = json_string_value(v);
        h->in_len = json_string_length(v);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_entries_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_entry_write_t *w = data;

    u_char                     *p;
    json_t                     *s;
    ngx_uint_t                  i;
    ngx_http_cms_html_t  *h;

    h = w->html.elts;

    for (i = 0; i < w->html.nelts; i++) {
        if (h[i].rc != CMS_SANITIZE_OK) {
            p = ngx_pnalloc(r->pool,
                            sizeof("data.") + ngx_strlen((char *) h[i].tag));
            if (p == NULL) {
                return NGX_ERROR;
            }

            ngx_sprintf(p, "data.%s%Z", (char *) h[i].tag);

            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_CONTENT_TOO_LARGE,
                                     (char *) p);
        }

        s = json_stringn(h[i].out, h[i].out_len);

        if (s == NULL || json_object_set_new(w->patch, h[i].tag, s) != 0) {
            return NGX_ERROR;
        }
    }

    return ngx_http_cms_entries_save(r, ctx);
}


static ngx_int_t
ngx_http_cms_entries_save(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_entry_write_t  *w;

    w = ctx->data;

    if (ngx_http_cms_json_dump(r, w->patch, &w->args[4]) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_save_sql, w->args,
                                 6, ngx_http_cms_entries_saved);
}


static ngx_int_t
ngx_http_cms_entries_saved(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                    rc;
    ngx_http_cms_entry_write_t  *w;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);

    if (rc == NGX_HTTP_CONFLICT) {
        /* the module changed between the two statements */
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_CONFLICT, NULL,
                                     "The custom module changed while the "
                                     "entry was written; retry");
    }

    if (rc != NGX_OK) {
        return rc;
    }

    w = ctx->data;

    return ngx_http_cms_send_row(r, w->create ? NGX_HTTP_CREATED
                                              : NGX_HTTP_OK,
                                 &ngx_http_cms_entry, res);
}


static ngx_int_t
ngx_http_cms_entries_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    ngx_http_cms_entries_path(ctx, args);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_entries_delete_sql, args,
                                 3, ngx_http_cms_entries_deleted);
}


static ngx_int_t
ngx_http_cms_entries_deleted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  empty = ngx_null_string;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1 || PQnfields(res) != 2
        || PQgetisnull(res, 0, 1))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
}


/*
 * $1 workspace, $2 the module's slug, $3 the entry id (data NULL when
 * there is none or it is malformed: not found, after the module's own
 * checks).
 */
static void
ngx_http_cms_entries_path(ngx_http_cms_ctx_t *ctx, ngx_str_t *args)
{
    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];
    ngx_str_null(&args[2]);

    if (ctx->nparams > 1
        && cms_uuid_valid((char *) ctx->params[1].data, ctx->params[1].len))
    {
        args[2] = ctx->params[1];
    }
}


/* column "col" of row 0 as JSON owned by r->pool; SQL NULL is NULL */
static ngx_int_t
ngx_http_cms_entries_load(ngx_http_request_t *r, PGresult *res, int col,
    json_t **out)
{
    *out = NULL;

    if (PQgetisnull(res, 0, col)) {
        return NGX_OK;
    }

    *out = json_loadb(PQgetvalue(res, 0, col), PQgetlength(res, 0, col), 0,
                      NULL);

    if (*out == NULL) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a stored custom module or entry is not JSON");
        return NGX_ERROR;
    }

    return ngx_http_cms_json_pool(r, *out);
}
