
/*
 * Articles: /v1/api/articles (secret key) and the studio mirrors under
 * /v1/workspaces/{id}/articles (session), one handler each for both.
 *
 * A write is validated here, its body sanitized in the thread pool, and
 * then applied by cms_article_save_slugged() (derived slugs, sql/0012),
 * cms_article_save_as() (sql/0008_article_authors.sql) and
 * cms_article_save() (sql/0003_content.sql), which hold the rules that
 * need the current row: an author's own articles, publish rights, live
 * edits, slugs per locale, revisions and outbox events, in one
 * transaction.
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
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_list.h"
#include "cms_sanitize.h"
#include "cms_text.h"
#include "cms_slug.h"
#include "cms_uuid.h"
#include "cms_url.h"
#include "cms_validate.h"


#define NGX_HTTP_CMS_ARTICLE_BODY_MAX  (512 * 1024)
#define NGX_HTTP_CMS_WORDS_PER_MINUTE  200


/* a write between its steps */
typedef struct {
    json_t                     *patch;       /* validated fields, for SQL */
    ngx_str_t                   id;          /* empty on create */
    ngx_uint_t                  autosave;
    ngx_uint_t                  read_time;   /* 0: estimate from the body */
    /* the sanitizer's job */
    const char                 *html;
    size_t                      html_len;
    char                       *out;
    size_t                      out_size;
    size_t                      out_len;
    size_t                      words;
    int                         rc;
} ngx_http_cms_article_write_t;


static ngx_int_t ngx_http_cms_articles_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_list_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);
static ngx_int_t ngx_http_cms_articles_list_fused_args(
    ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx, ngx_str_t *args,
    ngx_uint_t *nargs);
static ngx_int_t ngx_http_cms_articles_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_articles_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_articles_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_write(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t create);
static ngx_int_t ngx_http_cms_articles_sanitizing(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static void ngx_http_cms_articles_sanitize(void *data);
static ngx_int_t ngx_http_cms_articles_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_articles_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_saved(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_articles_refused(ngx_http_cms_ctx_t *ctx,
    ngx_int_t rc);
static ngx_int_t ngx_http_cms_articles_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static void ngx_http_cms_articles_actor(ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args);
static ngx_int_t ngx_http_cms_articles_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_article_write_t *w,
    ngx_uint_t create);
static ngx_int_t ngx_http_cms_articles_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *id);
static int ngx_http_cms_articles_time_valid(const char *p, size_t len);


/* the sanitizer in its lane: the output buffer is made when it starts */
static ngx_http_cms_thread_job_t  ngx_http_cms_articles_sanitizer = {
    ngx_http_cms_articles_sanitize, ngx_http_cms_articles_sanitizing,
    ngx_http_cms_articles_sanitized
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_save_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_article_save_slugged($1, $2, $3, $4, $5, $6::jsonb, $7)",
        7);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_delete_sql =
    ngx_http_cms_pg_stmt(
        "SELECT CASE WHEN cms_article_delete_as($1, $2, $3, $4, $5)"
        " THEN 'deleted' END", 5);

/*
 * The list's page: the filter of "ws" (the workspace's column), the locale
 * of "l", status $3 (NULL: all) and the page $4 / $5, read from
 * articles_list_idx; past the end, one row of NULLs.  Its total comes from
 * the counters kept by the writes (cms_article_total, sql/0006), never
 * from counting the workspace.
 */
/*
 * An article's columns as they are stored, written in C
 * (ngx_http_cms_articles_cols): the times and the tags in their text, the
 * status of cms_article_status() (sql/0003) inlined, not through a row
 * argument (that would copy the whole row, body included, for one
 * member).
 */
#define NGX_HTTP_CMS_ARTICLE_STATUS                                           \
    " CASE WHEN a.status = 'scheduled' AND a.published_at <= now()"          \
    "  THEN 'published' ELSE a.status END"

#define NGX_HTTP_CMS_ARTICLE_COLUMNS                                          \
    " a.id, a.title, a.slug, a.subtitle,"                                     \
    "   a.body," NGX_HTTP_CMS_ARTICLE_STATUS ", a.locale, a.image_url,"       \
    "   a.category_id, a.author_id, a.tags,"                                  \
    "   a.is_featured, a.is_breaking, a.is_opinion, a.focus_keyword,"         \
    "   a.read_time_minutes, a.comment_count, a.published_at,"                \
    "   a.created_at, a.updated_at"

/* one article by id ($2), its columns from column 1 */
#define NGX_HTTP_CMS_ARTICLE_ONE(ws)                                          \
    "SELECT 0," NGX_HTTP_CMS_ARTICLE_COLUMNS " FROM articles a"               \
    " WHERE a.workspace_id = " ws " AND a.id = $2::uuid"                      \
    "  AND a.deleted_at IS NULL"

/*
 * The key and the article in one round trip (GET /v1/api/articles/{id}):
 * the key's columns, then the article's, NULL when there is none.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_get_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, p.* FROM (" NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        " LEFT JOIN LATERAL (" NGX_HTTP_CMS_ARTICLE_ONE("k.workspace_id")
        ") p ON true", 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_get_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_ARTICLE_ONE("$1"), 2);

#define NGX_HTTP_CMS_ARTICLES_PAGE(ws)                                        \
    NGX_HTTP_CMS_LIST_TOTAL("cms_article_total(" ws ", l.locale, $3)")       \
    " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_ARTICLE_COLUMNS                 \
    "  FROM articles a WHERE a.workspace_id = " ws                            \
    "   AND a.deleted_at IS NULL AND a.locale = l.locale"                     \
    "   AND ($3::text IS NULL OR" NGX_HTTP_CMS_ARTICLE_STATUS " = $3)"       \
    "  ORDER BY a.created_at DESC, a.id DESC LIMIT $4 OFFSET $5) p"           \
    " ON true"

#define NGX_HTTP_CMS_ARTICLES_LOCALE(ws)                                      \
    " (SELECT coalesce($2, (SELECT default_locale FROM workspaces"            \
    "   WHERE id = " ws ")) AS locale) l"

/*
 * $1 workspace, $2 locale or NULL (the workspace's), $3 status or NULL,
 * $4 limit, $5 offset.  Every row: the total, then one article's columns
 * (ngx_http_cms_articles_cols).
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        NGX_HTTP_CMS_ARTICLES_LOCALE("$1")
        NGX_HTTP_CMS_ARTICLES_PAGE("$1"), 5);

/*
 * The key and the page in one round trip (GET /v1/api/articles): $1 the
 * key's HMAC, then as above; every row the key's columns first.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_list_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, t.total, p.* FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        " CROSS JOIN LATERAL"
        NGX_HTTP_CMS_ARTICLES_LOCALE("k.workspace_id")
        NGX_HTTP_CMS_ARTICLES_PAGE("k.workspace_id"), 5);

/*
 * The list searched (docs/search.md): $1 .. $5 as above, $6 the query,
 * read in the list's language; each article's highlight is cut from its
 * subtitle and body.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_search_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_SEARCH(
        "(SELECT coalesce($2, (SELECT default_locale FROM workspaces"
        "   WHERE id = $1)) AS locale) l",
        "articles a", "a",
        "a.workspace_id = $1 AND a.deleted_at IS NULL"
        " AND a.locale = s.locale"
        " AND ($3::text IS NULL OR" NGX_HTTP_CMS_ARTICLE_STATUS " = $3)",
        "a.title", NGX_HTTP_CMS_ARTICLE_COLUMNS,
        "concat_ws(' … ', cms_html_escape(nullif(a.subtitle, '')), a.body)",
        "$6", "$4", "$5"), 6);

/* the article object of cms_article_json() (sql/0003), from its columns */
static const ngx_http_cms_col_t  ngx_http_cms_articles_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "title", 2, NGX_HTTP_CMS_COL_STRING },
    { "slug", 3, NGX_HTTP_CMS_COL_STRING },
    { "subtitle", 4, NGX_HTTP_CMS_COL_STRING },
    { "excerpt", 4, NGX_HTTP_CMS_COL_STRING },
    { "body", 5, NGX_HTTP_CMS_COL_STRING },
    { "status", 6, NGX_HTTP_CMS_COL_STRING },
    { "locale", 7, NGX_HTTP_CMS_COL_STRING },
    { "image_url", 8, NGX_HTTP_CMS_COL_STRING },
    { "category_id", 9, NGX_HTTP_CMS_COL_STRING },
    { "author_id", 10, NGX_HTTP_CMS_COL_STRING },
    { "tags", 11, NGX_HTTP_CMS_COL_TEXT_ARRAY },
    { "is_featured", 12, NGX_HTTP_CMS_COL_BOOL },
    { "is_breaking", 13, NGX_HTTP_CMS_COL_BOOL },
    { "is_opinion", 14, NGX_HTTP_CMS_COL_BOOL },
    { "focus_keyword", 15, NGX_HTTP_CMS_COL_STRING },
    { "read_time_minutes", 16, NGX_HTTP_CMS_COL_NUMBER },
    { "comment_count", 17, NGX_HTTP_CMS_COL_NUMBER },
    { "published_at", 18, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 19, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 20, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_article = {
    "article", "articles", ngx_http_cms_articles_cols,
    sizeof(ngx_http_cms_articles_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * The body: the patch cms_article_save() applies, one member per field
 * given ($n only orders them; excerpt is subtitle's alias).  A string's
 * or a flag's null changes nothing; category_id, author_id and
 * published_at take null to unset them, on create too (author_id null:
 * no author, absent: the caller).  autosave is the caller's.
 */
static const char *const  ngx_http_cms_articles_statuses[] = {
    "draft", "in_review", "scheduled", "published", "archived", NULL
};

static const char *const  ngx_http_cms_articles_ignored[] = {
    "id", "comment_count", "created_at", "updated_at", NULL
};

/* a tag: tags holds 0 to 50 of them */
static const cms_field_t  ngx_http_cms_articles_tag = {
    NULL, CMS_FIELD_STRING, 0, 0, 0, 0, 1, 100, NULL, NULL, 0, NULL
};

#define NGX_HTTP_CMS_ART_SKIP   CMS_FIELD_NULL_ABSENT
#define NGX_HTTP_CMS_ART_UNSET  (CMS_FIELD_NULLABLE | CMS_FIELD_NULL_ALWAYS)

static const cms_field_t  ngx_http_cms_articles_fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY
      | NGX_HTTP_CMS_ART_SKIP, 1, NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0,
      1, 500, NULL, NULL, 0, NULL },
    /* a slug's own limit (200 bytes) is the slug rule's: invalid_slug;
       every script's letters, as a derived slug keeps them */
    { "slug", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 2, 0, 0, 0, 1000,
      NULL, cms_slug_text_valid, NGX_HTTP_CMS_ERR_INVALID_SLUG, NULL },
    { "subtitle", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 3, 0, 0, 0, 2000,
      NULL, NULL, 0, NULL },
    { "excerpt", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 3, 0, 0, 0, 2000,
      NULL, NULL, 0, NULL },
    { "body", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 4, 0, 0, 0,
      NGX_HTTP_CMS_ARTICLE_BODY_MAX, NULL, NULL, 0, NULL },
    { "status", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 5, 0, 0, 0, 20,
      ngx_http_cms_articles_statuses, NULL,
      NGX_HTTP_CMS_ERR_INVALID_STATUS, NULL },
    { "locale", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 6, 0, 0, 0, 35,
      NULL, cms_locale_valid, 0, NULL },
    /* absolute http(s), or "" (the default a record reads back with) */
    { "image_url", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 7, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "category_id", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_UNSET, 8, 0, 0,
      0, 36, NULL, cms_uuid_valid, 0, NULL },
    { "clear_category", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_ART_SKIP, 9, 0, 0,
      0, 0, NULL, NULL, 0, NULL },
    { "author_id", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_UNSET, 10, 0, 0,
      0, 36, NULL, cms_uuid_valid, 0, NULL },
    { "tags", CMS_FIELD_ARRAY, 0, 11, 0, 0, 0, 50, NULL, NULL, 0,
      &ngx_http_cms_articles_tag },
    { "is_featured", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_ART_SKIP, 12, 0, 0,
      0, 0, NULL, NULL, 0, NULL },
    { "is_breaking", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_ART_SKIP, 13, 0, 0,
      0, 0, NULL, NULL, 0, NULL },
    { "is_opinion", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_ART_SKIP, 14, 0, 0,
      0, 0, NULL, NULL, 0, NULL },
    { "focus_keyword", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_SKIP, 15, 0, 0,
      0, 200, NULL, NULL, 0, NULL },
    /* not > 0: estimated from the body */
    { "read_time_minutes", CMS_FIELD_INTEGER, NGX_HTTP_CMS_ART_SKIP, 16,
      0, 0, LLONG_MIN, 10000, NULL, NULL, 0, NULL },
    /* RFC 3339 with a zone, or "" (as null) to unset it */
    { "published_at", CMS_FIELD_STRING, NGX_HTTP_CMS_ART_UNSET, 17, 0, 0,
      0, 64, NULL, ngx_http_cms_articles_time_valid, 0, NULL },
    { "autosave", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_ART_SKIP, 0, 0, 0, 0, 0,
      NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_articles_input = {
    ngx_http_cms_articles_fields, ngx_http_cms_articles_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

static ngx_http_cms_fused_t  ngx_http_cms_articles_get_fused = {
    &ngx_http_cms_articles_get_fused_sql, NULL
};

static ngx_http_cms_fused_t  ngx_http_cms_articles_list_fused = {
    &ngx_http_cms_articles_list_fused_sql,
    ngx_http_cms_articles_list_fused_args
};


#define NGX_HTTP_CMS_ART_READ   NGX_HTTP_CMS_SCOPE_ARTICLES_READ
#define NGX_HTTP_CMS_ART_WRITE  NGX_HTTP_CMS_SCOPE_ARTICLES_WRITE


/*
 * Any member reads (a key: its creator's current role).  Authors and up
 * write; an author only the articles they are the author of, checked with
 * the row by cms_article_save_as() (sql/0006); editors and up write all.
 * Publishing and touching live articles need publish rights (author and
 * up, as the spec says), checked by cms_article_save().
 */
#define NGX_HTTP_CMS_ART_PUBLISH_ROLE  NGX_HTTP_CMS_ROLE_AUTHOR
#define NGX_HTTP_CMS_ART_ALL_ROLE      NGX_HTTP_CMS_ROLE_EDITOR

ngx_http_cms_route_t  ngx_http_cms_articles_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/articles"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_READ,
      ngx_http_cms_articles_list, &ngx_http_cms_articles_list_fused,
      ngx_http_cms_list_done,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/articles"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_GET, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_READ,
      ngx_http_cms_articles_get, &ngx_http_cms_articles_get_fused,
      ngx_http_cms_articles_got_fused,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_DELETE, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    ngx_http_cms_null_route
};


/* reads */

static ngx_int_t
ngx_http_cms_articles_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t             rc;
    ngx_str_t             args[6];
    ngx_http_cms_page_t  *page;

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_articles_list_args(r, ctx, &args[1]);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_list_search_arg(r, &args[5]);

    if (rc == NGX_OK) {
        page = ctx->data;
        page->search = 1;
        page->base = 1;

        return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_search_sql,
                                     args, 6, ngx_http_cms_list_done);
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_list_sql, args, 5,
                                 ngx_http_cms_list_done);
}


/*
 * The query's locale, status and page as $2 .. $5 (args[0 .. 3]), the
 * page kept in ctx->data.  NGX_OK, or the error recorded.
 */
static ngx_int_t
ngx_http_cms_articles_list_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args)
{
    ngx_int_t             rc;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_query_arg(r, "locale", 64, &args[0]);

    if (rc == NGX_OK && !cms_locale_valid((char *) args[0].data, args[0].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_query_arg(r, "status", 64, &args[1]);

    if (rc == NGX_OK
        && !cms_str_one_of((const char *) args[1].data, args[1].len,
                           ngx_http_cms_articles_statuses))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_STATUS, "status");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (page == NULL) {
        return NGX_ERROR;
    }

    page->rec = &ngx_http_cms_article;
    ctx->data = page;

    return ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                  NGX_HTTP_CMS_LIST_MAX, page, &args[2]);
}


/*
 * The fused list's $2 .. $5.  A query the list would refuse declines the
 * fused read: the key is then checked alone and the handler answers the
 * query's error, so that a bad credential is told first.
 */
static ngx_int_t
ngx_http_cms_articles_list_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs)
{
    ngx_int_t             rc;
    ngx_str_t             q;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_articles_list_args(r, ctx, args);

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    /* a search (or a bad "q") once the key is checked */
    if (rc == NGX_OK && ngx_http_cms_list_search_arg(r, &q) != NGX_DECLINED) {
        rc = NGX_DECLINED;
    }

    if (rc != NGX_OK) {
        ctx->has_err = 0;
        return NGX_DECLINED;
    }

    page = ctx->data;
    page->base = NGX_HTTP_CMS_AUTH_KEY_COLUMNS;
    *nargs = 4;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_articles_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.workspace_id;

    if (ngx_http_cms_articles_id(r, ctx, &args[1]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_get_sql, args, 2,
                                 ngx_http_cms_articles_got);
}


static ngx_int_t
ngx_http_cms_articles_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_article, res);
}


/* the record came with the key: its columns after the key's */
static ngx_int_t
ngx_http_cms_articles_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    return ngx_http_cms_send_row_at(r, NGX_HTTP_OK, &ngx_http_cms_article,
                                    res, NGX_HTTP_CMS_AUTH_KEY_COLUMNS);
}


/* writes */

static ngx_int_t
ngx_http_cms_articles_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_articles_write(r, ctx, 1);
}


static ngx_int_t
ngx_http_cms_articles_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_articles_write(r, ctx, 0);
}


static ngx_int_t
ngx_http_cms_articles_write(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t create)
{
    ngx_int_t                      rc;
    ngx_http_cms_article_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_article_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    ctx->data = w;

    if (!create && ngx_http_cms_articles_id(r, ctx, &w->id) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    rc = ngx_http_cms_articles_read(r, ctx, w, create);
    if (rc != NGX_OK) {
        return rc;
    }

    if (w->html == NULL) {
        if (create && w->read_time == 0) {
            w->read_time = 1;
        }

        return ngx_http_cms_articles_save(r, ctx);
    }

    /* at most cms_sanitize_jobs run, cms_sanitize_queue wait: 503 beyond */
    rc = ngx_http_cms_thread_queue(r, NGX_HTTP_CMS_LANE_SANITIZE,
                                   &ngx_http_cms_articles_sanitizer, w);

    if (rc == NGX_BUSY) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
}


/* the job's turn came: its output buffer, sized before it runs (a job
   waiting in the queue holds only the body) */
static ngx_int_t
ngx_http_cms_articles_sanitizing(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_article_write_t *w = data;

    w->out_size = cms_sanitize_out_max(w->html_len);
    w->out = ngx_pnalloc(r->pool, w->out_size);

    return w->out ? NGX_OK : NGX_ERROR;
}


/* in a pool thread */
static void
ngx_http_cms_articles_sanitize(void *data)
{
    ngx_http_cms_article_write_t *w = data;

    w->rc = cms_sanitize(w->html, w->html_len, w->out, w->out_size,
                         &w->out_len);

    if (w->rc == CMS_SANITIZE_OK) {
        w->words = cms_html_word_count(w->out, w->out_len);
    }
}


static ngx_int_t
ngx_http_cms_articles_sanitized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_article_write_t *w = data;

    json_t  *body;

    if (w->rc != CMS_SANITIZE_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_CONTENT_TOO_LARGE,
                                 "body");
    }

    body = json_stringn(w->out, w->out_len);

    if (body == NULL || json_object_set_new(w->patch, "body", body) != 0) {
        return NGX_ERROR;
    }

    if (w->read_time == 0) {
        w->read_time = ngx_max(1, (w->words + NGX_HTTP_CMS_WORDS_PER_MINUTE
                                   - 1) / NGX_HTTP_CMS_WORDS_PER_MINUTE);
    }

    return ngx_http_cms_articles_save(r, ctx);
}


static ngx_int_t
ngx_http_cms_articles_save(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t                      args[7];
    ngx_http_cms_article_write_t  *w;

    w = ctx->data;

    if (w->read_time
        && json_object_set_new(w->patch, "read_time_minutes",
                               json_integer(w->read_time)) != 0)
    {
        return NGX_ERROR;
    }

    ngx_http_cms_articles_actor(ctx, args);
    args[4] = w->id;
    ngx_str_set(&args[6], "f");

    if (w->autosave) {
        ngx_str_set(&args[6], "t");
    }

    if (w->id.len == 0) {
        ngx_str_null(&args[4]);
    }

    if (ngx_http_cms_json_dump(r, w->patch, &args[5]) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_save_sql, args, 7,
                                 ngx_http_cms_articles_saved);
}


static ngx_int_t
ngx_http_cms_articles_saved(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                      rc;
    ngx_http_cms_article_write_t  *w;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return ngx_http_cms_articles_refused(ctx, rc);
    }

    w = ctx->data;

    return ngx_http_cms_send_wrapped(r, w->id.len ? NGX_HTTP_OK
                                                     : NGX_HTTP_CREATED,
                                        "article", res);
}


/*
 * The save's one refusal of published_at (sql/0003): a scheduled article
 * left without one, on create or by clearing it.  Its value's form was
 * checked before, so the catalogue's "wrong type or form" would mislead.
 */
static ngx_int_t
ngx_http_cms_articles_refused(ngx_http_cms_ctx_t *ctx, ngx_int_t rc)
{
    static ngx_str_t  field = ngx_string("published_at");

    if (ctx->has_err && ctx->err.code == NGX_HTTP_CMS_ERR_INVALID_FIELD
        && ctx->err.message == NULL
        && ctx->err.param.len == field.len
        && ngx_strncmp(ctx->err.param.data, field.data, field.len) == 0)
    {
        ctx->err.message = "A scheduled article needs published_at";
    }

    return rc;
}


static ngx_int_t
ngx_http_cms_articles_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[5];

    ngx_http_cms_articles_actor(ctx, args);

    if (ngx_http_cms_articles_id(r, ctx, &args[4]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_delete_sql, args,
                                 5, ngx_http_cms_deleted_done);
}


/*
 * The first four parameters of a write: the workspace, the actor (a key's
 * creator), whether the actor's current role may publish, and whether it
 * may write others' articles.
 */
static void
ngx_http_cms_articles_actor(ngx_http_cms_ctx_t *ctx, ngx_str_t *args)
{
    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;
    ngx_str_set(&args[2], "f");
    ngx_str_set(&args[3], "f");

    if (ctx->principal.role >= NGX_HTTP_CMS_ART_PUBLISH_ROLE) {
        ngx_str_set(&args[2], "t");
    }

    if (ctx->principal.role >= NGX_HTTP_CMS_ART_ALL_ROLE) {
        ngx_str_set(&args[3], "t");
    }
}


/* validation: the body into w->patch through the field table */

static ngx_int_t
ngx_http_cms_articles_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_article_write_t *w, ngx_uint_t create)
{
    json_t     *v;
    ngx_int_t   rc;

    rc = ngx_http_cms_json_patch(r, ctx->body, &ngx_http_cms_articles_input,
                                 create ? CMS_FIELDS_CREATE
                                        : CMS_FIELDS_PATCH,
                                 &w->patch);
    if (rc != NGX_OK) {
        return rc;
    }

    w->autosave = json_is_true(json_object_get(ctx->body, "autosave"));

    /* the time given, else the estimate: ngx_http_cms_articles_save() */
    v = json_object_get(w->patch, "read_time_minutes");

    if (v != NULL) {
        if (json_integer_value(v) > 0) {
            w->read_time = (ngx_uint_t) json_integer_value(v);
        }

        json_object_del(w->patch, "read_time_minutes");
    }

    /* the body goes through the sanitizer before it joins the patch */
    v = json_object_get(w->patch, "body");

    if (v != NULL) {
        w->html = json_string_value(v);
        w->html_len = json_string_length(v);
    }

    return create ? ngx_http_cms_json_slug_derive(r, w->patch, "title")
                  : NGX_OK;
}


/* the article id of the path; a malformed one is simply not found */
static ngx_int_t
ngx_http_cms_articles_id(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *id)
{
    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        (void) ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
        return NGX_DECLINED;
    }

    *id = ctx->params[0];

    return NGX_OK;
}


/* published_at: RFC 3339 with a zone, or "" */
static int
ngx_http_cms_articles_time_valid(const char *p, size_t len)
{
    return len == 0 || cms_rfc3339_valid(p, len);
}
