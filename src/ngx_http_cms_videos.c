
/*
 * Videos: /v1/api/videos (secret key) and the studio mirrors under
 * /v1/workspaces/{id}/videos (session), one handler each for both.
 *
 * A write is read through one field table into a JSON patch and applied
 * by cms_video_save() (sql/0013_videos.sql), which holds the rules that
 * need the current row: publish rights on a live video, clear_stream,
 * published_at, derived slugs and the video.published event, in one
 * transaction.  Answers are written from columns; the secret-key reads
 * check the key and read in one round trip.
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
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_list.h"
#include "cms_slug.h"
#include "cms_uuid.h"
#include "cms_url.h"
#include "cms_validate.h"


static ngx_int_t ngx_http_cms_videos_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_videos_list_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs);
static ngx_int_t ngx_http_cms_videos_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_videos_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_videos_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_videos_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_videos_write(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t create);
static ngx_int_t ngx_http_cms_videos_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_videos_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static void ngx_http_cms_videos_actor(ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args);
static ngx_int_t ngx_http_cms_videos_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *id);
static int ngx_http_cms_videos_time_valid(const char *p, size_t len);


/*
 * What every read returns, from "v": the columns of ngx_http_cms_video,
 * numbered from 1.  Column 0 is a page's total, and 1 in a statement
 * that returns one video (NGX_HTTP_CMS_VIDEO_ONE).
 */
#define NGX_HTTP_CMS_VIDEO_ONE  " 1," NGX_HTTP_CMS_VIDEO_COLUMNS

#define NGX_HTTP_CMS_VIDEO_COLUMNS                                           \
    " v.id, v.title, v.slug, v.description, v.poster_url,"                   \
    " v.stream_video_id, v.stream_library_id, v.stream_status,"              \
    " v.source_url, v.duration_seconds, v.status, v.locale,"                 \
    " v.published_at, v.created_at, v.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_video_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "title", 2, NGX_HTTP_CMS_COL_STRING },
    { "slug", 3, NGX_HTTP_CMS_COL_STRING },
    { "description", 4, NGX_HTTP_CMS_COL_STRING },
    { "poster_url", 5, NGX_HTTP_CMS_COL_STRING },
    { "stream_video_id", 6, NGX_HTTP_CMS_COL_STRING },
    { "stream_library_id", 7, NGX_HTTP_CMS_COL_STRING },
    { "stream_status", 8, NGX_HTTP_CMS_COL_STRING },
    { "source_url", 9, NGX_HTTP_CMS_COL_STRING },
    { "duration_seconds", 10, NGX_HTTP_CMS_COL_NUMBER },
    { "status", 11, NGX_HTTP_CMS_COL_STRING },
    { "locale", 12, NGX_HTTP_CMS_COL_STRING },
    { "published_at", 13, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 14, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 15, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_video = {
    "video", "videos", ngx_http_cms_video_cols,
    sizeof(ngx_http_cms_video_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * The body: the patch cms_video_save() applies, one member per field
 * given ($n only orders them).  A string's or a flag's null changes
 * nothing; the fields the spec gives as "or null" take null to unset
 * them (on create too).  clear_stream unsets the three stream_* fields
 * and wins over them.
 */
static const char *const  ngx_http_cms_videos_statuses[] = {
    "draft", "published", "archived", NULL
};

static const char *const  ngx_http_cms_videos_stream_statuses[] = {
    "pending", "uploading", "processing", "ready", "failed", NULL
};

static const char *const  ngx_http_cms_videos_ignored[] = {
    "id", "created_at", "updated_at", NULL
};

#define NGX_HTTP_CMS_VID_SKIP   CMS_FIELD_NULL_ABSENT
#define NGX_HTTP_CMS_VID_UNSET  (CMS_FIELD_NULLABLE | CMS_FIELD_NULL_ALWAYS)

static const cms_field_t  ngx_http_cms_videos_fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY
      | NGX_HTTP_CMS_VID_SKIP, 1, NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0,
      1, 500, NULL, NULL, 0, NULL },
    { "slug", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_SKIP, 2, 0, 0, 0, 1000,
      NULL, cms_slug_text_valid, NGX_HTTP_CMS_ERR_INVALID_SLUG, NULL },
    { "description", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_SKIP, 3, 0, 0,
      0, 5000, NULL, NULL, 0, NULL },
    /* absolute http(s), or "" (the default a record reads back with) */
    { "poster_url", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_SKIP, 4, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "stream_video_id", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_UNSET, 5, 0, 0,
      1, 200, NULL, NULL, 0, NULL },
    { "stream_library_id", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_UNSET, 6,
      0, 0, 1, 200, NULL, NULL, 0, NULL },
    { "stream_status", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_UNSET, 7, 0, 0,
      0, 20, ngx_http_cms_videos_stream_statuses, NULL,
      NGX_HTTP_CMS_ERR_INVALID_STATUS, NULL },
    { "source_url", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_UNSET, 8, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid, NGX_HTTP_CMS_ERR_INVALID_URL,
      NULL },
    /* up to about three years */
    { "duration_seconds", CMS_FIELD_NUMBER, NGX_HTTP_CMS_VID_UNSET, 9,
      0, 0, 0, 100000000, NULL, NULL, 0, NULL },
    { "status", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_SKIP, 10, 0, 0, 0, 20,
      ngx_http_cms_videos_statuses, NULL, NGX_HTTP_CMS_ERR_INVALID_STATUS,
      NULL },
    { "locale", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_SKIP, 11, 0, 0, 0, 35,
      NULL, cms_locale_valid, 0, NULL },
    /* RFC 3339 with a zone, or "" (as null) to unset it */
    { "published_at", CMS_FIELD_STRING, NGX_HTTP_CMS_VID_UNSET, 12, 0, 0,
      0, 64, NULL, ngx_http_cms_videos_time_valid, 0, NULL },
    { "clear_stream", CMS_FIELD_BOOLEAN, NGX_HTTP_CMS_VID_SKIP, 13, 0, 0,
      0, 0, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_videos_input = {
    ngx_http_cms_videos_fields, ngx_http_cms_videos_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $1 workspace, $2 actor, $3 may publish, $4 id (NULL: create), $5 patch */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_save_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_VIDEO_ONE
        " FROM cms_video_save($1, $2, $3, $4, $5::jsonb) v", 5);

/* $1 workspace, $2 may publish, $3 id */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_delete_sql =
    ngx_http_cms_pg_stmt(
        "SELECT CASE WHEN cms_video_delete($1, $2, $3) THEN 'deleted' END",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_VIDEO_ONE " FROM videos v"
        " WHERE v.workspace_id = $1 AND v.id = $2", 2);

/* the key and the video in one round trip (GET /v1/api/videos/{id}) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_get_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*," NGX_HTTP_CMS_VIDEO_ONE " FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        " LEFT JOIN videos v ON v.workspace_id = k.workspace_id"
        "  AND v.id = $2::uuid", 2);

/*
 * The page of the workspace "ws", its total from the counters kept by
 * the writes (cms_record_total(), sql/0014): status $2 (NULL: all), limit
 * $3, offset $4; past the end, one row of NULLs after the total.
 */
#define NGX_HTTP_CMS_VIDEOS_PAGE(ws)                                          \
    NGX_HTTP_CMS_LIST_TOTAL("cms_record_total('videos', " ws ", $2)")        \
    " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_VIDEO_COLUMNS                   \
    "  FROM videos v WHERE v.workspace_id = " ws                              \
    "   AND ($2::text IS NULL OR v.status = $2)"                              \
    "  ORDER BY v.created_at DESC, v.id DESC LIMIT $3 OFFSET $4) p ON true"

/* $1 workspace; every row: the total, then a video's columns */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM (SELECT $1::uuid AS id) w"
        NGX_HTTP_CMS_VIDEOS_PAGE("w.id"), 4);

/* $1 the key's HMAC; every row: the key's columns first */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_list_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, t.total, p.* FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        NGX_HTTP_CMS_VIDEOS_PAGE("k.workspace_id"), 4);

/*
 * The list searched (docs/search.md): $1 workspace, $2 status or NULL,
 * $3 limit, $4 offset, $5 the query, read in the workspace's language.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_videos_search_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_SEARCH(
        "(SELECT default_locale AS locale FROM workspaces WHERE id = $1) l",
        "videos v", "v",
        "v.workspace_id = $1 AND ($2::text IS NULL OR v.status = $2)",
        "v.title", NGX_HTTP_CMS_VIDEO_COLUMNS, "cms_html_escape(v.description)",
        "$5", "$3", "$4"), 5);

/* the list's filter: ?status=, and its search: ?q= */
static const ngx_http_cms_list_filter_t  ngx_http_cms_videos_filter = {
    "status", ngx_http_cms_videos_statuses, NGX_HTTP_CMS_ERR_INVALID_STATUS,
    &ngx_http_cms_video, &ngx_http_cms_videos_search_sql
};

static ngx_http_cms_fused_t  ngx_http_cms_videos_get_fused = {
    &ngx_http_cms_videos_get_fused_sql, NULL
};

static ngx_http_cms_fused_t  ngx_http_cms_videos_list_fused = {
    &ngx_http_cms_videos_list_fused_sql,
    ngx_http_cms_videos_list_fused_args
};


#define NGX_HTTP_CMS_VID_READ   NGX_HTTP_CMS_SCOPE_VIDEOS_READ
#define NGX_HTTP_CMS_VID_WRITE  NGX_HTTP_CMS_SCOPE_VIDEOS_WRITE

/*
 * Any member reads; editors and up write (a video has no author of its
 * own, so it is everyone's content, as categories are).  Publish rights
 * (author and up, as for articles) are checked by cms_video_save().
 */
#define NGX_HTTP_CMS_VID_PUBLISH_ROLE  NGX_HTTP_CMS_ROLE_AUTHOR

ngx_http_cms_route_t  ngx_http_cms_videos_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/videos"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_VID_READ,
      ngx_http_cms_videos_list, &ngx_http_cms_videos_list_fused,
      ngx_http_cms_list_done,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/videos"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_VID_WRITE,
      ngx_http_cms_videos_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_GET, ngx_string("/api/videos/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_VID_READ,
      ngx_http_cms_videos_get, &ngx_http_cms_videos_get_fused,
      ngx_http_cms_videos_got_fused,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_PATCH, ngx_string("/api/videos/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_VID_WRITE,
      ngx_http_cms_videos_update, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_DELETE, ngx_string("/api/videos/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_VID_WRITE,
      ngx_http_cms_videos_delete, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    ngx_http_cms_null_route
};


/* reads */

static ngx_int_t
ngx_http_cms_videos_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_list_filtered(r, ctx, &ngx_http_cms_videos_filter,
                                      &ngx_http_cms_videos_list_sql);
}


/* the fused list's $2 .. $4 */
static ngx_int_t
ngx_http_cms_videos_list_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs)
{
    return ngx_http_cms_list_filtered_fused(r, ctx,
                                            &ngx_http_cms_videos_filter,
                                            NGX_HTTP_CMS_AUTH_KEY_COLUMNS,
                                            args, nargs);
}


static ngx_int_t
ngx_http_cms_videos_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.workspace_id;

    if (ngx_http_cms_videos_id(r, ctx, &args[1]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    ctx->data = (void *) &ngx_http_cms_video;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_videos_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}


/* the record came with the key: its columns after the key's */
static ngx_int_t
ngx_http_cms_videos_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    return ngx_http_cms_send_row_at(r, NGX_HTTP_OK, &ngx_http_cms_video, res,
                                    NGX_HTTP_CMS_AUTH_KEY_COLUMNS);
}


/* writes */

static ngx_int_t
ngx_http_cms_videos_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_videos_write(r, ctx, 1);
}


static ngx_int_t
ngx_http_cms_videos_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_videos_write(r, ctx, 0);
}


static ngx_int_t
ngx_http_cms_videos_write(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t create)
{
    json_t     *patch;
    ngx_int_t   rc;
    ngx_str_t   args[5];

    ngx_http_cms_videos_actor(ctx, args);
    ngx_str_null(&args[3]);

    if (!create && ngx_http_cms_videos_id(r, ctx, &args[3]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    rc = ngx_http_cms_json_patch(r, ctx->body, &ngx_http_cms_videos_input,
                                 create ? CMS_FIELDS_CREATE
                                        : CMS_FIELDS_PATCH,
                                 &patch);
    if (rc != NGX_OK) {
        return rc;
    }

    if (create && ngx_http_cms_json_slug_derive(r, patch, "title") != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_http_cms_json_dump(r, patch, &args[4]) != NGX_OK) {
        return NGX_ERROR;
    }

    /* 201 for the POST, 200 for the PATCH */
    ctx->data = (void *) &ngx_http_cms_video;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_videos_save_sql, args, 5,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_videos_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[4];

    ngx_http_cms_videos_actor(ctx, args);

    if (ngx_http_cms_videos_id(r, ctx, &args[3]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    /* $1 workspace, $2 may publish, $3 id */
    args[1] = args[2];
    args[2] = args[3];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_videos_delete_sql, args, 3,
                                 ngx_http_cms_videos_deleted);
}


static ngx_int_t
ngx_http_cms_videos_deleted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
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


/*
 * The first three parameters of a write: the workspace, the actor (a
 * key's creator) and whether the actor's current role may publish.
 */
static void
ngx_http_cms_videos_actor(ngx_http_cms_ctx_t *ctx, ngx_str_t *args)
{
    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;
    ngx_str_set(&args[2], "f");

    if (ctx->principal.role >= NGX_HTTP_CMS_VID_PUBLISH_ROLE) {
        ngx_str_set(&args[2], "t");
    }
}


/* the video id of the path; a malformed one is simply not found */
static ngx_int_t
ngx_http_cms_videos_id(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
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
ngx_http_cms_videos_time_valid(const char *p, size_t len)
{
    return len == 0 || cms_rfc3339_valid(p, len);
}
