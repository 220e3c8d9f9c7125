
/*
 * Articles: /v1/api/articles (secret key) and the studio mirrors under
 * /v1/workspaces/{id}/articles (session), one handler each for both.
 *
 * A write is validated here, its body sanitized in the thread pool, and
 * then applied by cms_article_save() (sql/0003_content.sql), which holds
 * the rules that need the current row: publish rights, live edits, slugs
 * per locale, revisions and outbox events, in one transaction.
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
#include "cms_uuid.h"
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
static ngx_int_t ngx_http_cms_articles_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
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
static ngx_int_t ngx_http_cms_articles_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_articles_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_articles_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_article_write_t *w,
    ngx_uint_t create);
static ngx_int_t ngx_http_cms_articles_strings(ngx_http_request_t *r,
    json_t *body, json_t *patch, ngx_uint_t create);
static ngx_int_t ngx_http_cms_articles_refs(ngx_http_request_t *r,
    json_t *body, json_t *patch);
static ngx_int_t ngx_http_cms_articles_flags(ngx_http_request_t *r,
    json_t *body, json_t *patch, ngx_http_cms_article_write_t *w);
static ngx_int_t ngx_http_cms_articles_tags(ngx_http_request_t *r,
    json_t *body, json_t *patch);
static ngx_int_t ngx_http_cms_articles_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *id);
static ngx_uint_t ngx_http_cms_articles_status_valid(ngx_str_t *s);


/* the sanitizer in its lane: the output buffer is made when it starts */
static ngx_http_cms_thread_job_t  ngx_http_cms_articles_sanitizer = {
    ngx_http_cms_articles_sanitize, ngx_http_cms_articles_sanitizing,
    ngx_http_cms_articles_sanitized
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_save_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_article_save($1, $2, $3, $4, $5::jsonb, $6)", 6);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_delete_sql =
    ngx_http_cms_pg_stmt(
        "SELECT CASE WHEN cms_article_delete($1, $2, $3)"
        " THEN 'deleted' END", 3);

/* the key and the article in one round trip (GET /v1/api/articles/{id}) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_get_fused_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_AUTH_KEY_SQL(
        ", (SELECT cms_article_json(a)::text FROM articles a"
        "   WHERE a.workspace_id = k.workspace_id AND a.id = $2::uuid"
        "    AND a.deleted_at IS NULL)"), 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_article_json(a)::text FROM articles a"
        " WHERE a.workspace_id = $1 AND a.id = $2 AND a.deleted_at IS NULL",
        2);

/*
 * $1 workspace, $2 locale or NULL (the workspace's), $3 status or NULL,
 * $4 limit, $5 offset.  Every row: the total, then one article's columns
 * (ngx_http_cms_articles_cols); past the end, one row of NULLs.  The
 * filter is written twice rather than shared through a CTE: a CTE used
 * twice is materialized, which copied every article of the workspace
 * (bodies too) per call.  This way the page is read from
 * articles_list_idx and the count needs no bodies.
 */
#define NGX_HTTP_CMS_ARTICLES_FILTER                                          \
    " FROM articles a WHERE a.workspace_id = $1 AND a.deleted_at IS NULL"     \
    "  AND a.locale = l.locale"                                               \
    "  AND ($3::text IS NULL OR cms_article_status(a) = $3)"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_articles_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT coalesce($2, (SELECT default_locale FROM workspaces"
        "   WHERE id = $1)) AS locale) l"
        " CROSS JOIN LATERAL (SELECT count(*) AS total"
        NGX_HTTP_CMS_ARTICLES_FILTER ") t"
        " LEFT JOIN LATERAL (SELECT a.id, a.title, a.slug, a.subtitle,"
        "   a.body, cms_article_status(a), a.locale, a.image_url,"
        "   a.category_id, a.author_id, array_to_json(a.tags),"
        "   a.is_featured, a.is_breaking, a.is_opinion, a.focus_keyword,"
        "   a.read_time_minutes, a.comment_count, cms_ts(a.published_at),"
        "   cms_ts(a.created_at), cms_ts(a.updated_at)"
        NGX_HTTP_CMS_ARTICLES_FILTER
        "  ORDER BY a.created_at DESC, a.id DESC LIMIT $4 OFFSET $5) p"
        " ON true",
        5);

/* the article object of cms_article_json(), from the list's columns */
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
    { "tags", 11, NGX_HTTP_CMS_COL_JSON },
    { "is_featured", 12, NGX_HTTP_CMS_COL_BOOL },
    { "is_breaking", 13, NGX_HTTP_CMS_COL_BOOL },
    { "is_opinion", 14, NGX_HTTP_CMS_COL_BOOL },
    { "focus_keyword", 15, NGX_HTTP_CMS_COL_STRING },
    { "read_time_minutes", 16, NGX_HTTP_CMS_COL_NUMBER },
    { "comment_count", 17, NGX_HTTP_CMS_COL_NUMBER },
    { "published_at", 18, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 19, NGX_HTTP_CMS_COL_STRING },
    { "updated_at", 20, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_article = {
    "article", "articles", ngx_http_cms_articles_cols,
    sizeof(ngx_http_cms_articles_cols) / sizeof(ngx_http_cms_col_t)
};


#define NGX_HTTP_CMS_ART_READ   NGX_HTTP_CMS_SCOPE_ARTICLES_READ
#define NGX_HTTP_CMS_ART_WRITE  NGX_HTTP_CMS_SCOPE_ARTICLES_WRITE


/*
 * Every member may write drafts; publishing and touching live articles
 * need publish rights (author and up), checked by cms_article_save().
 */
ngx_http_cms_route_t  ngx_http_cms_articles_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/articles"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_READ,
      ngx_http_cms_articles_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/articles"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_GET, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_READ,
      ngx_http_cms_articles_get, &ngx_http_cms_articles_get_fused_sql,
      ngx_http_cms_articles_got_fused,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_DELETE, ngx_string("/api/articles/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_ART_WRITE,
      ngx_http_cms_articles_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    ngx_http_cms_null_route
};


/* reads */

static ngx_int_t
ngx_http_cms_articles_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t             rc;
    ngx_str_t             args[5];
    ngx_http_cms_page_t  *page;

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_query_arg(r, "locale", 64, &args[1]);

    if (rc == NGX_OK && !cms_locale_valid((char *) args[1].data, args[1].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_query_arg(r, "status", 64, &args[2]);

    if (rc == NGX_OK && !ngx_http_cms_articles_status_valid(&args[2])) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_STATUS, "status");
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    page = ngx_palloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (page == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_list_page(r, 50, 100, page, &args[3]);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = page;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_list_sql, args, 5,
                                 ngx_http_cms_articles_listed);
}


static ngx_int_t
ngx_http_cms_articles_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send(r, &ngx_http_cms_article, res, ctx->data);
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

    return ngx_http_cms_send_wrapped(r, NGX_HTTP_OK, "article", res);
}


/* the record came with the key: the column after the key's */
static ngx_int_t
ngx_http_cms_articles_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    return ngx_http_cms_send_column(r, NGX_HTTP_OK, "article", res,
                                       NGX_HTTP_CMS_AUTH_KEY_COLUMNS);
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
    ngx_str_t                      args[6];
    ngx_http_cms_article_write_t  *w;

    w = ctx->data;

    if (w->read_time
        && json_object_set_new(w->patch, "read_time_minutes",
                               json_integer(w->read_time)) != 0)
    {
        return NGX_ERROR;
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;
    ngx_str_set(&args[2], "f");
    args[3] = w->id;
    ngx_str_set(&args[5], "f");

    if (ctx->principal.role >= NGX_HTTP_CMS_ROLE_AUTHOR) {
        ngx_str_set(&args[2], "t");
    }

    if (w->autosave) {
        ngx_str_set(&args[5], "t");
    }

    if (w->id.len == 0) {
        ngx_str_null(&args[3]);
    }

    if (ngx_http_cms_json_dump(r, w->patch, &args[4]) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_save_sql, args, 6,
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
        return rc;
    }

    w = ctx->data;

    return ngx_http_cms_send_wrapped(r, w->id.len ? NGX_HTTP_OK
                                                     : NGX_HTTP_CREATED,
                                        "article", res);
}


static ngx_int_t
ngx_http_cms_articles_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;
    ngx_str_set(&args[1], "f");

    if (ctx->principal.role >= NGX_HTTP_CMS_ROLE_AUTHOR) {
        ngx_str_set(&args[1], "t");
    }

    if (ngx_http_cms_articles_id(r, ctx, &args[2]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_articles_delete_sql, args,
                                 3, ngx_http_cms_articles_deleted);
}


static ngx_int_t
ngx_http_cms_articles_deleted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  empty = ngx_null_string;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
}


/* validation: the body into w->patch, every field checked for its type */

static ngx_int_t
ngx_http_cms_articles_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_article_write_t *w, ngx_uint_t create)
{
    ngx_int_t  rc;

    static const char  *fields[] = {
        "title", "slug", "subtitle", "excerpt", "body", "status", "locale",
        "image_url", "category_id", "clear_category", "author_id", "tags",
        "is_featured", "is_breaking", "is_opinion", "focus_keyword",
        "read_time_minutes", "published_at", "autosave", NULL };
    static const char  *ignored[] = { "id", "comment_count", "created_at",
                                      "updated_at", NULL };

    rc = ngx_http_cms_json_fields(r, ctx->body, fields, ignored);
    if (rc != NGX_OK) {
        return rc;
    }

    w->patch = json_object();
    if (w->patch == NULL || ngx_http_cms_json_pool(r, w->patch) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_articles_strings(r, ctx->body, w->patch, create);

    if (rc == NGX_OK) {
        rc = ngx_http_cms_articles_refs(r, ctx->body, w->patch);
    }

    if (rc == NGX_OK) {
        rc = ngx_http_cms_articles_flags(r, ctx->body, w->patch, w);
    }

    if (rc == NGX_OK) {
        rc = ngx_http_cms_articles_tags(r, ctx->body, w->patch);
    }

    if (rc != NGX_OK) {
        return rc;
    }

    /* the body goes through the sanitizer before it joins the patch */
    if (json_object_get(w->patch, "body") != NULL) {
        w->html = json_string_value(json_object_get(w->patch, "body"));
        w->html_len = json_string_length(json_object_get(w->patch, "body"));
    }

    return NGX_OK;
}


/* title, slug, subtitle (or excerpt), body, status, locale, ... */
/* long: one bounded check per text field, in order */
static ngx_int_t
ngx_http_cms_articles_strings(ngx_http_request_t *r, json_t *body,
    json_t *patch, ngx_uint_t create)
{
    ngx_int_t   rc;
    ngx_str_t   v[8];
    ngx_uint_t  i;

    static const char  *names[] = { "title", "slug", "subtitle", "body",
                                    "status", "locale", "image_url",
                                    "focus_keyword" };
    /* a slug's own limit (200) is the slug rule's: invalid_slug */
    static size_t       max[] = { 500, 1000, 2000,
                                  NGX_HTTP_CMS_ARTICLE_BODY_MAX, 20, 35,
                                  2048, 200 };

    for (i = 0; i < 8; i++) {
        rc = ngx_http_cms_json_string(r, body, names[i],
                                      (i == 0 && create)
                                      ? NGX_HTTP_CMS_ERR_TITLE_REQUIRED : 0,
                                      max[i], &v[i]);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (v[0].data != NULL && v[0].len == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_TITLE_REQUIRED, "title");
    }

    /* excerpt is an alias of subtitle; subtitle wins when both come */
    if (v[2].data == NULL) {
        rc = ngx_http_cms_json_string(r, body, "excerpt", 0, 2000, &v[2]);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_cms_json_slug(r, &v[1], create ? &v[0] : NULL);
    if (rc != NGX_OK) {
        return rc;
    }


    if (v[4].data != NULL
        && !ngx_http_cms_articles_status_valid(&v[4]))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_STATUS, "status");
    }

    if (v[5].data != NULL
        && !cms_locale_valid((char *) v[5].data, v[5].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "locale");
    }

    for (i = 0; i < 8; i++) {
        if (v[i].data != NULL
            && json_object_set_new(patch, names[i],
                                   json_stringn((char *) v[i].data, v[i].len))
               != 0)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* category_id, author_id: a uuid or null; published_at: a time or "" */
/* long: the category and tag checks, each its own code */
static ngx_int_t
ngx_http_cms_articles_refs(ngx_http_request_t *r, json_t *body,
    json_t *patch)
{
    json_t      *v;
    ngx_uint_t   i;

    static const char  *names[] = { "category_id", "author_id" };

    for (i = 0; i < 2; i++) {
        v = json_object_get(body, names[i]);

        if (v == NULL) {
            continue;
        }

        if (!json_is_null(v)
            && (!json_is_string(v)
                || !cms_uuid_valid(json_string_value(v),
                                   json_string_length(v))))
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     names[i]);
        }

        if (json_object_set(patch, names[i], v) != 0) {
            return NGX_ERROR;
        }
    }

    v = json_object_get(body, "published_at");

    if (v != NULL) {
        /* RFC 3339 with a zone, or "" (null) to clear it */
        if (json_is_null(v)) {
            v = json_string("");

        } else if (!json_is_string(v)
                   || (json_string_length(v) != 0
                       && !cms_rfc3339_valid(json_string_value(v),
                                             json_string_length(v))))
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "published_at");

        } else {
            json_incref(v);
        }

        if (v == NULL || json_object_set_new(patch, "published_at", v) != 0) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* booleans, read_time_minutes and autosave */
static ngx_int_t
ngx_http_cms_articles_flags(ngx_http_request_t *r, json_t *body,
    json_t *patch, ngx_http_cms_article_write_t *w)
{
    json_t      *v;
    ngx_uint_t   i;

    static const char  *names[] = { "is_featured", "is_breaking",
                                    "is_opinion", "clear_category",
                                    "autosave" };

    for (i = 0; i < 5; i++) {
        v = json_object_get(body, names[i]);

        if (v == NULL || json_is_null(v)) {
            continue;
        }

        if (!json_is_boolean(v)) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     names[i]);
        }

        if (i == 4) {
            w->autosave = json_is_true(v);

        } else if (json_object_set(patch, names[i], v) != 0) {
            return NGX_ERROR;
        }
    }

    v = json_object_get(body, "read_time_minutes");

    if (v != NULL && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) > 10000) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "read_time_minutes");
        }

        /* not > 0: estimate from the body */
        if (json_integer_value(v) > 0) {
            w->read_time = (ngx_uint_t) json_integer_value(v);
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_articles_tags(ngx_http_request_t *r, json_t *body,
    json_t *patch)
{
    size_t   i;
    json_t  *tags, *v;

    tags = json_object_get(body, "tags");

    if (tags == NULL) {
        return NGX_OK;
    }

    if (!json_is_array(tags) || json_array_size(tags) > 50) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "tags");
    }

    json_array_foreach(tags, i, v) {
        if (!json_is_string(v) || json_string_length(v) == 0
            || json_string_length(v) > 100)
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "tags");
        }
    }

    return json_object_set(patch, "tags", tags) == 0 ? NGX_OK : NGX_ERROR;
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


static ngx_uint_t
ngx_http_cms_articles_status_valid(ngx_str_t *s)
{
    static const char *const  statuses[] = { "draft", "in_review",
                                             "scheduled", "published",
                                             "archived", NULL };

    return cms_str_one_of((const char *) s->data, s->len, statuses);
}
