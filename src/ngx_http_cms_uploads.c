
/*
 * Uploads, under /v1/workspaces/{id}/media (studio, authors and up):
 *
 *   POST .../media/uploads              reserves a pending asset, its
 *                                       storage key and declared size
 *   POST .../media/{assetId}/finalize   data_base64 stored, or without
 *                                       it an asset stored elsewhere
 *   PUT  .../media/{assetId}/content    the raw bytes as the body
 *
 * Both ways of storing go the same steps: the pending asset read (404,
 * 409 when finalized), the bytes written beside their place in the
 * thread pool (hashed, sniffed, fsynced: ngx_http_cms_store.c), the
 * sniffed type checked against the key's extension, the asset finalized
 * in PostgreSQL (the real size replacing the reservation under the plan's
 * limits, decided by cms_plan_refusal(): sql/0027_uploads.sql), and only
 * then the file renamed into place.  A refusal removes the temporary
 * file.  Expired reservations are given back by the jobs and by the next
 * reservation of the same workspace.
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
#include "ngx_http_cms_store.h"
#include "cms_mime.h"
#include "cms_uuid.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_RESERVE_ARGS   10    /* $1 .. $9, then the filename */
#define NGX_HTTP_CMS_FINALIZE_ARGS  11    /* $1 .. $10, then data_base64 */


/* a finalization in flight, in ctx->data */
typedef struct {
    ngx_str_t                   args[NGX_HTTP_CMS_FINALIZE_ARGS];
    ngx_http_cms_store_t       *st;
    ngx_fd_t                    fd;        /* the body's file, or none */
    ngx_str_t                   answer;    /* {"media": ...} once final */
    ngx_int_t                   rc;        /* a failure, once released */
    u_char                      size[NGX_OFF_T_LEN];
    u_char                      dims[2 * NGX_INT_T_LEN];
} ngx_http_cms_upload_t;


static ngx_int_t ngx_http_cms_uploads_reserve(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_uploads_type(ngx_http_request_t *r,
    ngx_str_t *args);
static ngx_int_t ngx_http_cms_uploads_finalize(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_uploads_content(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_uploads_lookup(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_upload_t *u);
static ngx_int_t ngx_http_cms_uploads_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_uploads_written(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_uploads_finalized(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static void ngx_http_cms_uploads_image(ngx_http_cms_upload_t *u,
    ngx_http_cms_store_t *st);
static ngx_int_t ngx_http_cms_uploads_claimed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_uploads_placed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_uploads_unplaced(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_uploads_release(ngx_http_request_t *r,
    ngx_http_cms_upload_t *u, ngx_int_t rc);
static ngx_int_t ngx_http_cms_uploads_released(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/* the upload session (studio-api.md), and when its reservation lapses */
static const ngx_http_cms_col_t  ngx_http_cms_upload_cols[] = {
    { "asset_id", 0, NGX_HTTP_CMS_COL_STRING },
    { "storage_key", 1, NGX_HTTP_CMS_COL_STRING },
    { "content_type", 2, NGX_HTTP_CMS_COL_STRING },
    { "expires_at", 3, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_upload_record = {
    "upload", "uploads", ngx_http_cms_upload_cols,
    sizeof(ngx_http_cms_upload_cols) / sizeof(ngx_http_cms_col_t)
};


static const char *const  ngx_http_cms_upload_types[] = {
    "image", "video", "audio", "file", NULL
};

#define NGX_HTTP_CMS_UPL_SKIP  CMS_FIELD_NULL_ABSENT

/* $3 type, $4 title, $5 content type, $7 size, $8 folder, $10 filename */
static const cms_field_t  ngx_http_cms_reserve_fields[] = {
    { "filename", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 10, 0, 0, 1, 255,
      NULL, NULL, 0, NULL },
    { "content_type", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 5, 0, 0, 1,
      CMS_MIME_MAX, NULL, NULL, 0, NULL },
    { "type", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 3, 0, 0, 0, 10,
      ngx_http_cms_upload_types, NULL, 0, NULL },
    { "title", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 4, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    { "size_bytes", CMS_FIELD_INTEGER, NGX_HTTP_CMS_UPL_SKIP, 7, 0, 0,
      0, LLONG_MAX, NULL, NULL, 0, NULL },
    { "folder", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 8, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_reserve_input = {
    ngx_http_cms_reserve_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $5 url (beyond the spec: where an asset stored elsewhere lives) .. $9,
   then data_base64 ($10 is the colour a stored image's header gives) */
static const cms_field_t  ngx_http_cms_finalize_fields[] = {
    { "data_base64", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 11, 0, 0, 0,
      INT_MAX, NULL, NULL, 0, NULL },
    { "url", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 5, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "title", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 6, 0, 0, 0, 500,
      NULL, NULL, 0, NULL },
    { "thumbnail_url", CMS_FIELD_STRING, NGX_HTTP_CMS_UPL_SKIP, 7, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "width", CMS_FIELD_INTEGER, NGX_HTTP_CMS_UPL_SKIP, 8, 0, 0,
      1, 2147483647, NULL, NULL, 0, NULL },
    { "height", CMS_FIELD_INTEGER, NGX_HTTP_CMS_UPL_SKIP, 9, 0, 0,
      1, 2147483647, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_finalize_input = {
    ngx_http_cms_finalize_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $1 workspace, $2 user, $3 type .. $8 folder, $9 the reservation's life */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_uploads_reserve_sql =
    ngx_http_cms_pg_stmt(
        "SELECT m.id, m.storage_key, m.mime_type, cms_ts(m.reserved_until)"
        " FROM cms_media_reserve($1, $2, $3, $4, $5, $6, $7::bigint, $8,"
        " $9::float8) m", 9);

/* $1 workspace, $2 asset: its key, or not_found / conflict raised */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_uploads_pending_sql =
    ngx_http_cms_pg_stmt(
        "SELECT storage_key FROM cms_media_pending($1, $2)", 2);

/* $1 workspace, $2 asset: claimed for this finalization (sql/0035) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_uploads_claim_sql =
    ngx_http_cms_pg_stmt(
        "SELECT storage_key FROM cms_media_claim($1, $2,"
        " interval '15 minutes')", 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_uploads_release_sql =
    ngx_http_cms_pg_stmt("SELECT cms_media_release($1, $2)", 2);

/* $1 workspace, $2 asset, $3 size, $4 hash, $5 url .. $9 height, $10
   colour (sql/0041) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_uploads_finalize_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_MEDIA_ONE " FROM cms_media_finalize($1, $2,"
        " $3::bigint, $4, $5, $6, $7, $8::integer, $9::integer, $10) m", 10);


ngx_http_cms_route_t  ngx_http_cms_uploads_routes[] = {

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/media/uploads"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_uploads_reserve, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/media/:key/finalize"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_uploads_finalize, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* the body is the file (NGX_HTTP_CMS_BODY_FILE) */
ngx_http_cms_route_t  ngx_http_cms_uploads_file_routes[] = {

    { NGX_HTTP_PUT, ngx_string("/workspaces/:id/media/:key/content"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_uploads_content, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* long: the fields, their defaults and the two caps the module checks */
static ngx_int_t
ngx_http_cms_uploads_reserve(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                    *p;
    off_t                      size;
    ngx_int_t                  rc;
    ngx_str_t                  args[NGX_HTTP_CMS_RESERVE_ARGS];
    ngx_http_cms_loc_conf_t   *lcf;
    ngx_http_cms_main_conf_t  *mcf;

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_reserve_input,
                                CMS_FIELDS_CREATE, args,
                                NGX_HTTP_CMS_RESERVE_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    if (args[2].data == NULL) {
        ngx_str_set(&args[2], "image");
    }

    if (args[3].data == NULL) {
        ngx_str_set(&args[3], "");
    }

    if (args[7].data == NULL) {
        ngx_str_set(&args[7], "");
    }

    if (args[6].data == NULL) {
        ngx_str_set(&args[6], "0");
    }

    rc = ngx_http_cms_uploads_type(r, args);
    if (rc != NGX_OK) {
        return rc;
    }

    /* more than a raw upload may carry could never be stored */
    lcf = ngx_http_get_module_loc_conf(r, ngx_http_cms_module);
    size = ngx_atoof(args[6].data, args[6].len);

    if (size == NGX_ERROR || size > (off_t) lcf->upload_max_size) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UPLOAD_TOO_LARGE,
                                 "size_bytes");
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    p = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    args[8].data = p;
    args[8].len = ngx_sprintf(p, "%T", mcf->upload_ttl) - p;

    ctx->data = (void *) &ngx_http_cms_upload_record;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_reserve_sql, args,
                                 9, ngx_http_cms_row_done);
}


/*
 * The content type: as declared, else the filename's extension's, else
 * application/octet-stream; it must suit the asset's type and never run
 * as script (cms_mime_check()).  The key's extension is the type's
 * (cms_mime_ext()), and the asset records the type the files route
 * serves for that extension: $5 and $6 set.
 */
/* long: the default, then each refusal with its message */
static ngx_int_t
ngx_http_cms_uploads_type(ngx_http_request_t *r, ngx_str_t *args)
{
    u_char      *dot, *end;
    const char  *ext, *type, *msg;

    if (args[4].data == NULL) {
        type = "application/octet-stream";

        if (args[9].data != NULL) {
            end = args[9].data + args[9].len;

            for (dot = end; dot > args[9].data && dot[-1] != '.'; dot--) {
                /* void */
            }

            if (dot > args[9].data) {
                type = cms_mime_ext_type((char *) dot, end - dot);
            }
        }

        args[4].data = (u_char *) type;
        args[4].len = ngx_strlen(type);
    }

    switch (cms_mime_check((char *) args[2].data, (char *) args[4].data,
                           args[4].len))
    {
    case CMS_MIME_OK:
        break;

    case CMS_MIME_INVALID:
        msg = "content_type must be a media type such as image/png";
        goto refused;

    case CMS_MIME_EXECUTABLE:
        msg = "content_type is a type that runs as script, which is refused";
        goto refused;

    default:
        msg = "content_type does not match the asset's type";
        goto refused;
    }

    ext = cms_mime_ext((char *) args[4].data, args[4].len);
    type = cms_mime_ext_type(ext, ngx_strlen(ext));

    args[5].data = (u_char *) ext;
    args[5].len = ngx_strlen(ext);
    args[4].data = (u_char *) type;
    args[4].len = ngx_strlen(type);

    return NGX_OK;

refused:

    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                 "content_type", msg);
}


static ngx_int_t
ngx_http_cms_uploads_finalize(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t               rc;
    ngx_http_cms_upload_t  *u;

    u = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_upload_t));
    if (u == NULL) {
        return NGX_ERROR;
    }

    u->fd = NGX_INVALID_FILE;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_finalize_input,
                                CMS_FIELDS_CREATE, u->args,
                                NGX_HTTP_CMS_FINALIZE_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    if (u->args[10].data == NULL) {
        /* stored elsewhere: no bytes here, the reservation given back */
        u->args[0] = ctx->principal.workspace_id;
        u->args[1] = ctx->params[0];

        if (!cms_uuid_valid((char *) u->args[1].data, u->args[1].len)) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
        }

        ctx->data = (void *) &ngx_http_cms_media_record;

        return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_finalize_sql,
                                     u->args, 10, ngx_http_cms_row_ok_done);
    }

    if (u->args[4].data != NULL) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, "url",
                                     "url is for an asset stored elsewhere,"
                                     " without data_base64");
    }

    if (u->args[10].len == 0) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "data_base64", "data_base64 is empty");
    }

    return ngx_http_cms_uploads_lookup(r, ctx, u);
}


/* the body is the file: nginx's temporary file holds it whole */
static ngx_int_t
ngx_http_cms_uploads_content(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_upload_t  *u;

    if (r->request_body == NULL || r->request_body->temp_file == NULL) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     NULL, "The body is the file's bytes,"
                                     " and it is empty");
    }

    u = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_upload_t));
    if (u == NULL) {
        return NGX_ERROR;
    }

    u->fd = r->request_body->temp_file->file.fd;

    return ngx_http_cms_uploads_lookup(r, ctx, u);
}


/* the pending asset's key: 404 unknown or lapsed, 409 finalized */
static ngx_int_t
ngx_http_cms_uploads_lookup(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_upload_t *u)
{
    u->args[0] = ctx->principal.workspace_id;
    u->args[1] = ctx->params[0];

    if (!cms_uuid_valid((char *) u->args[1].data, u->args[1].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    ctx->data = u;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_pending_sql,
                                 u->args, 2, ngx_http_cms_uploads_found);
}


static ngx_int_t
ngx_http_cms_uploads_found(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t               rc;
    ngx_str_t               key;
    ngx_http_cms_upload_t  *u = ctx->data;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    key.data = (u_char *) PQgetvalue(res, 0, 0);
    key.len = PQgetlength(res, 0, 0);

    u->st = ngx_http_cms_store_create(r, &key);
    if (u->st == NULL) {
        return NGX_ERROR;
    }

    u->st->fd = u->fd;
    u->st->base64 = u->args[10];

    return ngx_http_cms_store_write(r, u->st, ngx_http_cms_uploads_written);
}


/* the bytes are beside their place: checked, then the asset finalized */
/* long: each verdict of the bytes with its message */
static ngx_int_t
ngx_http_cms_uploads_written(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    const char             *msg;
    ngx_http_cms_upload_t  *u = ctx->data;
    ngx_http_cms_store_t   *st = data;

    if (st->status == NGX_HTTP_CMS_STORE_BAD_DATA) {
        return ngx_http_cms_store_refuse(r, u->st, NGX_HTTP_CMS_STORE_DISCARD,
                   ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                         "data_base64", "data_base64 is not"
                                         " base64"));
    }

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        return ngx_http_cms_store_failed(r, st);
    }

    switch (ngx_http_cms_store_verdict(st)) {

    case NGX_HTTP_CMS_STORE_MATCH:
        msg = NULL;
        break;

    case NGX_HTTP_CMS_STORE_EMPTY:
        msg = "The file is empty";
        break;

    case NGX_HTTP_CMS_STORE_EXECUTABLE:
        msg = "The file's bytes are of a type that runs as script";
        break;

    default:
        msg = "The file's bytes are not of its declared content type";
        break;
    }

    if (msg != NULL) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: upload \"%V\" refused: the bytes are \"%s\"",
                      &st->key, st->type);

        return ngx_http_cms_store_refuse(r, u->st, NGX_HTTP_CMS_STORE_DISCARD,
                   ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                         u->fd == NGX_INVALID_FILE
                                         ? "data_base64" : NULL, msg));
    }

    u->args[2].data = u->size;
    u->args[2].len = ngx_sprintf(u->size, "%O", st->size) - u->size;
    u->args[3].data = st->sha256;
    u->args[3].len = sizeof(st->sha256);

    ngx_http_cms_uploads_image(u, st);

    /* the asset's url: absolute, so that it can be registered again and
       used from the customer's site */
    if (ngx_http_cms_store_url(r, &st->key, &u->args[4]) != NGX_OK) {
        return NGX_ERROR;
    }

    /*
     * The object first, then the row that says it is ready (sql/0035): a
     * row is never ready without its object, and an object whose row
     * could not be finalized (a studio DELETE meanwhile, the quota) is
     * removed again before the answer.  The claim keeps a second
     * finalization from placing its bytes at the same key meanwhile.
     */
    return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_claim_sql,
                                 u->args, 2, ngx_http_cms_uploads_claimed);
}


/* an image's own header says its size, over what the client said, and
   its colour ($8, $9, $10) */
static void
ngx_http_cms_uploads_image(ngx_http_cms_upload_t *u,
    ngx_http_cms_store_t *st)
{
    if (st->image.width) {
        u->args[7].data = u->dims;
        u->args[7].len = ngx_sprintf(u->dims, "%ui", st->image.width)
                         - u->dims;
        u->args[8].data = u->dims + NGX_INT_T_LEN;
        u->args[8].len = ngx_sprintf(u->args[8].data, "%ui",
                                     st->image.height)
                         - u->args[8].data;
    }

    if (st->image.color[0]) {
        u->args[9].data = st->image.color;
        u->args[9].len = ngx_strlen((char *) st->image.color);
    }
}


static ngx_int_t
ngx_http_cms_uploads_claimed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t               rc;
    ngx_http_cms_upload_t  *u = ctx->data;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return ngx_http_cms_store_refuse(r, u->st, NGX_HTTP_CMS_STORE_DISCARD,
                                         rc);
    }

    return ngx_http_cms_store_finish(r, u->st, NGX_HTTP_CMS_STORE_COMMIT,
                                     ngx_http_cms_uploads_placed);
}


static ngx_int_t
ngx_http_cms_uploads_placed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_upload_t  *u = ctx->data;

    if (u->st->status != NGX_HTTP_CMS_STORE_OK) {
        return ngx_http_cms_uploads_release(r, u,
                                            ngx_http_cms_store_failed(r,
                                                                      u->st));
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_finalize_sql,
                                 u->args, 10, ngx_http_cms_uploads_finalized);
}


/* the row was not finalized: its object removed, then the claim */
static ngx_int_t
ngx_http_cms_uploads_unplaced(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_store_t   *st = data;
    ngx_http_cms_upload_t  *u = ctx->data;

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        /* logged; the reconciliation finds what is left */
        (void) ngx_http_cms_store_failed(r, st);
    }

    return ngx_http_cms_uploads_release(r, u, u->rc);
}


/* the claim given back, then the failure "rc" answered */
static ngx_int_t
ngx_http_cms_uploads_release(ngx_http_request_t *r, ngx_http_cms_upload_t *u,
    ngx_int_t rc)
{
    u->rc = rc;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_uploads_release_sql,
                                 u->args, 2, ngx_http_cms_uploads_released);
}


static ngx_int_t
ngx_http_cms_uploads_released(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_http_cms_upload_t  *u = ctx->data;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        /* the claim runs out by itself */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: releasing an upload's claim failed");
    }

    return u->rc;
}


/* the asset is ready, its object in place: the answer */
static ngx_int_t
ngx_http_cms_uploads_finalized(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    u_char                       *p;
    size_t                        len;
    ngx_int_t                     rc;
    ngx_http_cms_upload_t        *u = ctx->data;
    const ngx_http_cms_record_t  *rec;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        /* the object in place, and named by nothing */
        u->rc = rc;
        return ngx_http_cms_store_finish(r, u->st, NGX_HTTP_CMS_STORE_REMOVE,
                                         ngx_http_cms_uploads_unplaced);
    }

    rec = &ngx_http_cms_media_record;

    len = sizeof("{\"media\":}") - 1
          + ngx_http_cms_json_row_len(res, 0, 0, rec->cols, rec->ncols);

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    u->answer.data = p;
    p = ngx_cpymem(p, "{\"media\":", sizeof("{\"media\":") - 1);
    p = ngx_http_cms_json_row(p, res, 0, 0, rec->cols, rec->ncols);
    *p++ = '}';
    u->answer.len = p - u->answer.data;

    return ngx_http_cms_send_written(r, NGX_HTTP_OK, &u->answer);
}
