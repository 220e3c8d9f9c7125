
/*
 * Article SEO records: GET and PUT
 * /v1/workspaces/{id}/articles/{articleId}/seo (session).  Any member
 * reads; authors and up write the articles they may edit (an author only
 * their own, as for the article itself), checked with the row by
 * cms_article_seo_save() (sql/0025_article_seo.sql).  A PUT merges: a
 * field left out keeps its value, null clears it.  An article never
 * analysed reads as an empty record (nulls, data {}), not a 404.
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
#include "cms_fields.h"


/* the analyser's raw output: compact JSON text, at most (README) */
#define NGX_HTTP_CMS_SEO_DATA_MAX   (16 * 1024)
#define NGX_HTTP_CMS_SEO_SCORE_MAX  1000000


static ngx_int_t ngx_http_cms_seo_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_seo_put(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#define NGX_HTTP_CMS_SEO_COLUMNS                                             \
    " s.article_id, s.score, s.max_score, s.grade, s.focus_keyword,"         \
    " s.data, s.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_seo_cols[] = {
    { "article_id", 0, NGX_HTTP_CMS_COL_STRING },
    { "score", 1, NGX_HTTP_CMS_COL_NUMBER },
    { "max_score", 2, NGX_HTTP_CMS_COL_NUMBER },
    { "grade", 3, NGX_HTTP_CMS_COL_STRING },
    { "focus_keyword", 4, NGX_HTTP_CMS_COL_STRING },
    { "data", 5, NGX_HTTP_CMS_COL_JSON },
    { "updated_at", 6, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_seo = {
    "seo", "seo", ngx_http_cms_seo_cols,
    sizeof(ngx_http_cms_seo_cols) / sizeof(ngx_http_cms_col_t)
};


/* $1 workspace, $2 article: its record, or an empty one; no live article
   in the workspace, no row */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_seo_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT a.id, s.score, s.max_score, s.grade, s.focus_keyword,"
        " coalesce(s.data, '{}'), s.updated_at"
        " FROM articles a LEFT JOIN article_seo s"
        "  ON s.article_id = a.id AND s.workspace_id = a.workspace_id"
        " WHERE a.workspace_id = $1 AND a.id = $2 AND a.deleted_at IS NULL",
        2);

/* $1 workspace, $2 article, $3 the actor (NULL: every article), $4 the
   fields given, as a JSON patch */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_seo_put_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_SEO_COLUMNS
        " FROM cms_article_seo_save($1, $3, $2, $4::jsonb) s", 4);


static const char *const  ngx_http_cms_seo_ignored[] = {
    "article_id", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_seo_fields[] = {
    { "score", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 1, 0, 0,
      0, NGX_HTTP_CMS_SEO_SCORE_MAX, NULL, NULL, 0, NULL },
    { "max_score", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 2, 0, 0,
      1, NGX_HTTP_CMS_SEO_SCORE_MAX, NULL, NULL, 0, NULL },
    { "grade", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 3, 0, 0,
      1, 32, NULL, NULL, 0, NULL },
    { "focus_keyword", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 4, 0, 0,
      0, 200, NULL, NULL, 0, NULL },
    { "data", CMS_FIELD_OBJECT, CMS_FIELD_NULLABLE, 5, 0, 0,
      0, NGX_HTTP_CMS_SEO_DATA_MAX, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_seo_input = {
    ngx_http_cms_seo_fields, ngx_http_cms_seo_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


ngx_http_cms_route_t  ngx_http_cms_seo_routes[] = {

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/articles/:article/seo"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_seo_get, NULL, NULL, 0 },

    { NGX_HTTP_PUT, ngx_string("/workspaces/:id/articles/:article/seo"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_seo_put, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_seo_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_seo;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_seo_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_seo_put(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t     *patch;
    ngx_int_t   rc;
    ngx_str_t   args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_patch(r, ctx->body, &ngx_http_cms_seo_input,
                                 CMS_FIELDS_PATCH, &patch);
    if (rc != NGX_OK) {
        return rc;
    }

    /* an author edits only their own articles: the statement checks */
    ngx_str_null(&args[2]);

    if (ctx->principal.role < NGX_HTTP_CMS_ROLE_EDITOR) {
        args[2] = ctx->principal.user_id;
    }

    if (ngx_http_cms_json_dump(r, patch, &args[3]) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->data = (void *) &ngx_http_cms_seo;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_seo_put_sql, args, 4,
                                 ngx_http_cms_row_ok_done);
}
