
/*
 * Media registration: /v1/api/media (secret key) and the studio mirrors
 * under /v1/workspaces/{id}/media (session), one handler each for both,
 * plus the studio's DELETE, which removes an upload's stored object after
 * the row (ngx_http_cms_store.c; the sum of sizes, the quota's use, drops
 * with the row).  An asset registered here already lives at its URL
 * (status "ready"); uploads (ngx_http_cms_uploads.c) reserve and finalize
 * assets in the same table (sql/0009_media.sql, sql/0027_uploads.sql).
 *
 * The body is read through one field table; mime_type is then checked
 * against the asset's type with cms_mime (script-executable types are
 * refused whatever the type).  Answers are written from columns; the
 * secret-key reads check the key and read in one round trip.
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
#include "ngx_http_cms_store.h"
#include "cms_mime.h"
#include "cms_uuid.h"
#include "cms_url.h"
#include "cms_validate.h"


#define NGX_HTTP_CMS_MEDIA_ARGS  11


static ngx_int_t ngx_http_cms_media_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_media_list_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs);
static ngx_int_t ngx_http_cms_media_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_media_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_media_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_media_mime(ngx_http_request_t *r,
    ngx_str_t *type, ngx_str_t *mime);
static ngx_int_t ngx_http_cms_media_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_media_deleted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_media_removed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_media_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);


/* the columns: NGX_HTTP_CMS_MEDIA_COLUMNS (_resources.h) */
static const ngx_http_cms_col_t  ngx_http_cms_media_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "type", 2, NGX_HTTP_CMS_COL_STRING },
    { "title", 3, NGX_HTTP_CMS_COL_STRING },
    { "url", 4, NGX_HTTP_CMS_COL_STRING },
    { "thumbnail_url", 5, NGX_HTTP_CMS_COL_STRING },
    { "mime_type", 6, NGX_HTTP_CMS_COL_STRING },
    { "size_bytes", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "width", 8, NGX_HTTP_CMS_COL_NUMBER },
    { "height", 9, NGX_HTTP_CMS_COL_NUMBER },
    { "folder", 10, NGX_HTTP_CMS_COL_STRING },
    { "status", 11, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 12, NGX_HTTP_CMS_COL_TIME },
    { "color", 13, NGX_HTTP_CMS_COL_STRING },
    { "srcset", 14, NGX_HTTP_CMS_COL_SRCSET },
};

/* the spec names the list and the record alike: {media}, {media, ...} */
const ngx_http_cms_record_t  ngx_http_cms_media_record = {
    "media", "media", ngx_http_cms_media_cols,
    sizeof(ngx_http_cms_media_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * The body: $2 type .. $10 height ($1 the workspace, $11 the creator).
 * Every field is optional (the spec); strings default to "" and a null
 * counts as absent, width and height take null (unknown).
 */
static const char *const  ngx_http_cms_media_types[] = {
    "image", "video", "audio", "file", NULL
};

static const char *const  ngx_http_cms_media_ignored[] = {
    "id", "status", "created_at", NULL
};

#define NGX_HTTP_CMS_MED_SKIP  CMS_FIELD_NULL_ABSENT

static const cms_field_t  ngx_http_cms_media_fields[] = {
    { "type", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 2, 0, 0, 0, 10,
      ngx_http_cms_media_types, NULL, 0, NULL },
    { "title", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 3, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    /* absolute http(s), or "" (the default a record reads back with) */
    { "url", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 4, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "thumbnail_url", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 5, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    /* checked against the type by ngx_http_cms_media_mime() */
    { "mime_type", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 6, 0, 0, 0,
      CMS_MIME_MAX, NULL, NULL, 0, NULL },
    { "size_bytes", CMS_FIELD_INTEGER, NGX_HTTP_CMS_MED_SKIP, 7, 0, 0,
      0, LLONG_MAX, NULL, NULL, 0, NULL },
    { "folder", CMS_FIELD_STRING, NGX_HTTP_CMS_MED_SKIP, 8, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    { "width", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 9, 0, 0,
      1, 2147483647, NULL, NULL, 0, NULL },
    { "height", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 10, 0, 0,
      1, 2147483647, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_media_input = {
    ngx_http_cms_media_fields, ngx_http_cms_media_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* a NULL keeps the default */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO media_assets AS m (workspace_id, type, title, url,"
        " thumbnail_url, mime_type, size_bytes, folder, width, height,"
        " created_by)"
        " VALUES ($1, coalesce($2, 'image'), coalesce($3, ''),"
        "  coalesce($4, ''), coalesce($5, ''), coalesce($6, ''),"
        "  coalesce($7::bigint, 0), coalesce($8, ''), $9::integer,"
        "  $10::integer, $11)"
        " RETURNING" NGX_HTTP_CMS_MEDIA_ONE, 11);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_MEDIA_ONE " FROM media_assets m"
        " WHERE m.workspace_id = $1 AND m.id = $2", 2);

/* the key and the asset in one round trip (GET /v1/api/media/{id}) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_get_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*," NGX_HTTP_CMS_MEDIA_ONE " FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        " LEFT JOIN media_assets m ON m.workspace_id = k.workspace_id"
        "  AND m.id = $2::uuid", 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM media_assets WHERE workspace_id = $1 AND id = $2"
        " RETURNING id, CASE WHEN status = 'ready' THEN storage_key END", 2);

/*
 * The page of the workspace "ws", its total from the counters kept by
 * the writes (cms_record_total(), sql/0014): type $2 (NULL: all), limit
 * $3, offset $4, newest first (media_assets_list_idx,
 * media_assets_type_idx); past the end, one row of NULLs after the total.
 */
#define NGX_HTTP_CMS_MEDIA_PAGE(ws)                                           \
    NGX_HTTP_CMS_LIST_TOTAL("cms_record_total('media', " ws ", $2)")         \
    " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_MEDIA_COLUMNS                   \
    "  FROM media_assets m WHERE m.workspace_id = " ws                        \
    "   AND ($2::text IS NULL OR m.type = $2)"                                \
    "  ORDER BY m.created_at DESC, m.id DESC LIMIT $3 OFFSET $4) p ON true"

/* $1 workspace; every row: the total, then an asset's columns */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM (SELECT $1::uuid AS id) w"
        NGX_HTTP_CMS_MEDIA_PAGE("w.id"), 4);

/* $1 the key's HMAC; every row: the key's columns first */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_media_list_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, t.total, p.* FROM ("
        NGX_HTTP_CMS_AUTH_KEY_SQL("") ") k"
        NGX_HTTP_CMS_MEDIA_PAGE("k.workspace_id"), 4);

/* the list's filter: ?type= */
static const ngx_http_cms_list_filter_t  ngx_http_cms_media_filter = {
    "type", ngx_http_cms_media_types, NGX_HTTP_CMS_ERR_INVALID_FIELD,
    &ngx_http_cms_media_record, NULL
};

static ngx_http_cms_fused_t  ngx_http_cms_media_get_fused = {
    &ngx_http_cms_media_get_fused_sql, NULL
};

static ngx_http_cms_fused_t  ngx_http_cms_media_list_fused = {
    &ngx_http_cms_media_list_fused_sql, ngx_http_cms_media_list_fused_args
};


#define NGX_HTTP_CMS_MED_READ   NGX_HTTP_CMS_SCOPE_MEDIA_READ
#define NGX_HTTP_CMS_MED_WRITE  NGX_HTTP_CMS_SCOPE_MEDIA_WRITE

/*
 * Any member reads; authors and up register (an author needs images for
 * their articles, as in WordPress); editors and up delete (an asset may
 * be in anyone's article).
 */
ngx_http_cms_route_t  ngx_http_cms_media_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/media"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_MED_READ,
      ngx_http_cms_media_list, &ngx_http_cms_media_list_fused,
      ngx_http_cms_list_done,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/media"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_MED_WRITE,
      ngx_http_cms_media_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    { NGX_HTTP_GET, ngx_string("/api/media/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_MED_READ,
      ngx_http_cms_media_get, &ngx_http_cms_media_get_fused,
      ngx_http_cms_media_got_fused,
      NGX_HTTP_CMS_ROLE_VIEWER },

    /* the studio's only: the spec gives keys no DELETE */
    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/media/:key"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_media_delete, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* reads */

static ngx_int_t
ngx_http_cms_media_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_list_filtered(r, ctx, &ngx_http_cms_media_filter,
                                      &ngx_http_cms_media_list_sql);
}


/* the fused list's $2 .. $4 */
static ngx_int_t
ngx_http_cms_media_list_fused_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs)
{
    return ngx_http_cms_list_filtered_fused(r, ctx,
                                            &ngx_http_cms_media_filter,
                                            NGX_HTTP_CMS_AUTH_KEY_COLUMNS,
                                            args, nargs);
}


static ngx_int_t
ngx_http_cms_media_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.workspace_id;

    if (ngx_http_cms_media_id(r, ctx, &args[1]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    ctx->data = (void *) &ngx_http_cms_media_record;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_media_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}


/* the record came with the key: its columns after the key's */
static ngx_int_t
ngx_http_cms_media_got_fused(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_send_row_at(r, NGX_HTTP_OK,
                                    &ngx_http_cms_media_record, res,
                                    NGX_HTTP_CMS_AUTH_KEY_COLUMNS);
}


/* writes */

static ngx_int_t
ngx_http_cms_media_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_MEDIA_ARGS];

    args[0] = ctx->principal.workspace_id;
    args[10] = ctx->principal.user_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_media_input,
                                CMS_FIELDS_CREATE, args,
                                NGX_HTTP_CMS_MEDIA_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_media_mime(r, &args[1], &args[5]);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_media_record;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_media_insert_sql, args,
                                 NGX_HTTP_CMS_MEDIA_ARGS,
                                 ngx_http_cms_row_done);
}


/*
 * mime_type against the asset's type (absent: image): "" or absent is
 * an unknown type, taken; else cms_mime_check(), each refusal 400
 * invalid_field_value with its own message.  The reader left both
 * terminated.
 */
static ngx_int_t
ngx_http_cms_media_mime(ngx_http_request_t *r, ngx_str_t *type,
    ngx_str_t *mime)
{
    const char  *asset;

    if (mime->data == NULL || mime->len == 0) {
        return NGX_OK;
    }

    asset = type->data ? (const char *) type->data : "image";

    switch (cms_mime_check(asset, (const char *) mime->data, mime->len)) {

    case CMS_MIME_OK:
        return NGX_OK;

    case CMS_MIME_INVALID:
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "mime_type", "mime_type must be a media"
                                     " type such as image/png");

    case CMS_MIME_EXECUTABLE:
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "mime_type", "mime_type is a type that"
                                     " runs as script, which is refused");

    default:
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "mime_type", "mime_type does not match"
                                     " the asset's type");
    }
}


static ngx_int_t
ngx_http_cms_media_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.workspace_id;

    if (ngx_http_cms_media_id(r, ctx, &args[1]) != NGX_OK) {
        return NGX_HTTP_NOT_FOUND;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_media_delete_sql, args, 2,
                                 ngx_http_cms_media_deleted);
}


/* the row first, then its stored object (a ready upload's), if any */
static ngx_int_t
ngx_http_cms_media_deleted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  key, empty = ngx_null_string;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (PQgetisnull(res, 0, 1) || PQgetlength(res, 0, 1) == 0) {
        return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
    }

    key.data = (u_char *) PQgetvalue(res, 0, 1);
    key.len = PQgetlength(res, 0, 1);

    return ngx_http_cms_store_remove(r, &key, ngx_http_cms_media_removed);
}


static ngx_int_t
ngx_http_cms_media_removed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_str_t  empty = ngx_null_string;

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
}


/* the asset id of the path; a malformed one is simply not found */
static ngx_int_t
ngx_http_cms_media_id(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *id)
{
    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        (void) ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
        return NGX_DECLINED;
    }

    *id = ctx->params[0];

    return NGX_OK;
}
