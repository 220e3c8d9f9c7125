
/*
 * Comments: /v1/api/comments (secret key) and the studio mirrors under
 * /v1/workspaces/{id}/comments (session).  Threaded (a reply names its
 * parent, a comment of the same article, at most 8 levels deep), always
 * created pending, moderated by PATCH.  The content is plain text, kept
 * and answered as it was sent (JSON-escaped, never HTML): a page showing
 * it escapes it as text.
 *
 * The writes are cms_comment_create(), cms_comment_update() and
 * cms_comment_delete() (sql/0010_comments.sql): the article's
 * comment_count and the comment.created event change in the same
 * transaction as the comment.
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
#include "cms_uuid.h"


/* the longest comment, in characters (README, API notes) */
#define NGX_HTTP_CMS_COMMENT_MAX       10000


static ngx_int_t ngx_http_cms_comments_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_comments_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs);
static ngx_int_t ngx_http_cms_comments_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_comments_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_comments_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_comments_content(ngx_http_request_t *r,
    ngx_str_t *content);


/* what every statement returns: 0 (a list's total) and the comment */
#define NGX_HTTP_CMS_COMMENT_COLUMNS                                         \
    " c.id, c.article_id, c.parent_id, c.author_name, c.author_email,"      \
    " c.content, c.status, c.created_at"

static const ngx_http_cms_col_t  ngx_http_cms_comment_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "article_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "parent_id", 3, NGX_HTTP_CMS_COL_STRING },
    { "author_name", 4, NGX_HTTP_CMS_COL_STRING },
    { "author_email", 5, NGX_HTTP_CMS_COL_STRING },
    { "content", 6, NGX_HTTP_CMS_COL_STRING },
    { "status", 7, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 8, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_comment = {
    "comment", "comments", ngx_http_cms_comment_cols,
    sizeof(ngx_http_cms_comment_cols) / sizeof(ngx_http_cms_col_t)
};


static const char *const  ngx_http_cms_comments_statuses[] = {
    "pending", "approved", "spam", NULL
};

/*
 * Create: $2 article_id, $3 parent_id, $4 author_name, $5 author_email,
 * $6 content ($1 the workspace).  status is one of the fields the API
 * answers, so a client may send it back: it is ignored, a new comment is
 * always pending.  The content's own limit is checked after the read
 * (comment_too_long apart from a value of the wrong type).
 */
static const char *const  ngx_http_cms_comments_create_ignored[] = {
    "id", "status", "created_at", NULL
};

static const cms_field_t  ngx_http_cms_comments_create_fields[] = {
    { "article_id", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 2,
      NGX_HTTP_CMS_ERR_ID_REQUIRED, 0, 0, 36, NULL, cms_uuid_valid, 0,
      NULL },
    { "parent_id", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 3,
      0, 0, 0, 36, NULL, cms_uuid_valid, 0, NULL },
    { "author_name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY,
      4, NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "author_email", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 5,
      0, NGX_HTTP_CMS_ERR_INVALID_EMAIL, 0, 254, NULL, cms_email_valid, 0,
      NULL },
    { "content", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY,
      6, NGX_HTTP_CMS_ERR_CONTENT_REQUIRED, 0, 1, 1000000, NULL, NULL, 0,
      NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_comments_create_input = {
    ngx_http_cms_comments_create_fields, ngx_http_cms_comments_create_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

/* update: $3 status, $4 content ($1 the workspace, $2 the comment) */
static const char *const  ngx_http_cms_comments_update_ignored[] = {
    "id", "article_id", "parent_id", "created_at", NULL
};

static const cms_field_t  ngx_http_cms_comments_update_fields[] = {
    { "status", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 3, 0, 0, 0, 20,
      ngx_http_cms_comments_statuses, NULL, NGX_HTTP_CMS_ERR_INVALID_STATUS,
      NULL },
    { "content", CMS_FIELD_STRING, CMS_FIELD_NONEMPTY, 4,
      NGX_HTTP_CMS_ERR_CONTENT_REQUIRED, 0, 1, 1000000, NULL, NULL, 0,
      NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_comments_update_input = {
    ngx_http_cms_comments_update_fields, ngx_http_cms_comments_update_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_insert_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_COMMENT_COLUMNS
        " FROM cms_comment_create($1, $2, $3, $4, $5, $6) c", 6);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_update_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_COMMENT_COLUMNS
        " FROM cms_comment_update($1, $2, $3, $4) c", 4);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_delete_sql =
    ngx_http_cms_pg_stmt("SELECT cms_comment_delete($1, $2)", 2);

/*
 * The page: the comments of live articles, newest first.  $1 workspace,
 * $2 status or NULL, $3 limit, $4 offset; the article's comments ($2 the
 * article, then as above) read from comments_article_idx, their total from
 * the article's counters (sql/0018).  Past the end, one row of NULLs.
 */
#define NGX_HTTP_CMS_COMMENTS_LIVE                                           \
    " JOIN articles a ON a.id = c.article_id AND a.deleted_at IS NULL"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM comments c"
        NGX_HTTP_CMS_COMMENTS_LIVE
        "   WHERE c.workspace_id = $1"
        "    AND ($2::text IS NULL OR c.status = $2)) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_COMMENT_COLUMNS
        "  FROM comments c" NGX_HTTP_CMS_COMMENTS_LIVE
        "  WHERE c.workspace_id = $1 AND ($2::text IS NULL OR c.status = $2)"
        "  ORDER BY c.created_at DESC, c.id DESC LIMIT $3 OFFSET $4) p"
        " ON true", 4);

/* one article's page in the workspace "ws" */
#define NGX_HTTP_CMS_COMMENTS_ARTICLE(ws)                                     \
    " CROSS JOIN LATERAL (SELECT a.id FROM articles a WHERE a.id = $2::uuid"  \
    "   AND a.workspace_id = " ws " AND a.deleted_at IS NULL"                 \
    "  UNION ALL SELECT NULL LIMIT 1) a"                                      \
    NGX_HTTP_CMS_LIST_TOTAL("cms_comment_total(a.id, $3)")                   \
    " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_COMMENT_COLUMNS                 \
    "  FROM comments c WHERE c.article_id = a.id"                             \
    "   AND ($3::text IS NULL OR c.status = $3)"                              \
    "  ORDER BY c.created_at DESC, c.id DESC LIMIT $4 OFFSET $5) p"           \
    " ON true"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_article_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM (SELECT $1::uuid AS id) w"
        NGX_HTTP_CMS_COMMENTS_ARTICLE("w.id"), 5);

/* the key and one article's page in one round trip: $1 the key's HMAC */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_comments_article_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, t.total, p.* FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        NGX_HTTP_CMS_COMMENTS_ARTICLE("k.workspace_id"), 5);

static ngx_http_cms_fused_t  ngx_http_cms_comments_article_fused = {
    &ngx_http_cms_comments_article_fused_sql,
    ngx_http_cms_comments_fused_args
};


#define NGX_HTTP_CMS_COM_READ   NGX_HTTP_CMS_SCOPE_COMMENTS_READ
#define NGX_HTTP_CMS_COM_WRITE  NGX_HTTP_CMS_SCOPE_COMMENTS_WRITE


/*
 * Every member reads and comments (viewers too, as the studio spec says);
 * moderating and editing (PATCH) and deleting need an editor or up.
 */
ngx_http_cms_route_t  ngx_http_cms_comments_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/comments"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_COM_READ,
      ngx_http_cms_comments_list, &ngx_http_cms_comments_article_fused,
      ngx_http_cms_list_done,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/comments"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_COM_WRITE,
      ngx_http_cms_comments_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/comments/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_COM_WRITE,
      ngx_http_cms_comments_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_DELETE, ngx_string("/api/comments/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_COM_WRITE,
      ngx_http_cms_comments_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    ngx_http_cms_null_route
};


/* GET: ?article_id= reads one article's comments, ?status= filters */
static ngx_int_t
ngx_http_cms_comments_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[5];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_list_filter(r, "article_id", NULL, 0, &args[1]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    if (rc == NGX_DECLINED) {
        rc = ngx_http_cms_list_filter(r, "status",
                                      ngx_http_cms_comments_statuses,
                                      NGX_HTTP_CMS_ERR_INVALID_STATUS,
                                      &args[1]);
        if (rc != NGX_OK && rc != NGX_DECLINED) {
            return rc;
        }

        return ngx_http_cms_list_query(r, &ngx_http_cms_comments_list_sql,
                                       args, 4, &ngx_http_cms_comment);
    }

    rc = ngx_http_cms_list_filter(r, "status", ngx_http_cms_comments_statuses,
                                  NGX_HTTP_CMS_ERR_INVALID_STATUS, &args[2]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_comments_article_sql,
                                   args, 5, &ngx_http_cms_comment);
}


/*
 * The fused read's $2 .. $5 (one article's page, the only list read with
 * the key): without ?article_id=, or with a query the list refuses, it
 * declines, and the key is checked alone before the handler answers.
 */
static ngx_int_t
ngx_http_cms_comments_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs)
{
    ngx_int_t             rc;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_list_filter(r, "article_id", NULL, 0, &args[0]);

    if (rc == NGX_OK) {
        rc = ngx_http_cms_list_filter(r, "status",
                                      ngx_http_cms_comments_statuses,
                                      NGX_HTTP_CMS_ERR_INVALID_STATUS,
                                      &args[1]);
        rc = (rc == NGX_DECLINED) ? NGX_OK : rc;
    }

    page = NULL;

    if (rc == NGX_OK) {
        page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
        if (page == NULL) {
            return NGX_ERROR;
        }

        rc = ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                    NGX_HTTP_CMS_LIST_MAX, page, &args[2]);
    }

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    if (rc != NGX_OK) {
        ctx->has_err = 0;
        return NGX_DECLINED;
    }

    page->rec = &ngx_http_cms_comment;
    page->base = NGX_HTTP_CMS_AUTH_KEY_COLUMNS;
    ctx->data = page;
    *nargs = 4;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_comments_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[6];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_comments_create_input,
                                CMS_FIELDS_CREATE, args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_comments_content(r, &args[5]);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_comment;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_comments_insert_sql, args,
                                 6, ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_comments_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_comments_update_input,
                                CMS_FIELDS_PATCH, args, 4);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_comments_content(r, &args[3]);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_comment;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_comments_update_sql, args,
                                 4, ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_comments_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    /* no such comment: cms_comment_delete() raises not_found */
    return ngx_http_cms_pg_query(r, &ngx_http_cms_comments_delete_sql, args,
                                 2, ngx_http_cms_deleted_done);
}


/*
 * The content given is at most NGX_HTTP_CMS_COMMENT_MAX characters: its
 * bytes that start one (the reader checked that it is UTF-8).
 */
static ngx_int_t
ngx_http_cms_comments_content(ngx_http_request_t *r, ngx_str_t *content)
{
    size_t  i, n;

    n = 0;

    for (i = 0; content->data != NULL && i < content->len; i++) {
        n += ((content->data[i] & 0xc0) != 0x80);
    }

    if (n > NGX_HTTP_CMS_COMMENT_MAX) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_COMMENT_TOO_LONG,
                                 "content");
    }

    return NGX_OK;
}
