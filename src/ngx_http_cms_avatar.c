
/*
 * The caller's avatar (a session, as GET /v1/me):
 *
 *   PUT    /v1/me/avatar   the image's raw bytes as the body
 *   DELETE /v1/me/avatar   no avatar any more (204)
 *
 * The body is a file (NGX_HTTP_CMS_BODY_AVATAR): nginx streams it to its
 * temporary file up to cms_avatar_max_size (413 avatar_too_large, for a
 * declared length before a byte is read).  Then the steps of an upload,
 * with the same store (ngx_http_cms_store.c): the bytes written beside
 * their place in the thread pool (hashed, sniffed by libmagic, fsynced);
 * only a raster image (PNG, JPEG, GIF, WebP) is taken, whatever the
 * Content-Type says, and a declared type must be the sniffed one; the
 * file renamed into place at "users/<user id>/<32 hex>.<ext>" (a new key
 * each time: a cached copy of the old picture never shows as the new);
 * then the user's row names it, in the statement that checks the user is
 * still active (sql/0028_avatars.sql), and only then the picture it
 * replaced is removed.  A refusal at any step removes what was written.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_body.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_store.h"
#include "cms_filekey.h"
#include "cms_mime.h"


#define NGX_HTTP_CMS_AVATAR_RANDOM  16     /* bytes of a key's name */


/* a change in flight, in ctx->data */
typedef struct {
    ngx_http_cms_store_t       *st;        /* the new picture; NULL: DELETE */
    const char                 *declared;  /* the Content-Type's extension,
                                              NULL for any */
    ngx_str_t                   answer;    /* sent once the old one goes */
} ngx_http_cms_avatar_t;


static ngx_int_t ngx_http_cms_avatar_put(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_avatar_declared(ngx_http_request_t *r,
    ngx_http_cms_avatar_t *a);
static ngx_uint_t ngx_http_cms_avatar_raster(const char *ext);
static ngx_int_t ngx_http_cms_avatar_written(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static const char *ngx_http_cms_avatar_refusal(ngx_http_cms_avatar_t *a,
    const char *ext);
static ngx_int_t ngx_http_cms_avatar_committed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_avatar_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_avatar_set(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_avatar_removed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);


/* the rasters an avatar may be, by the storage table's extensions */
static const char *const  ngx_http_cms_avatar_exts[] = {
    "png", "jpg", "gif", "webp", NULL
};


/* $1 user, $2 the new key or NULL: the user record, the key replaced */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_avatar_set_sql =
    ngx_http_cms_pg_stmt(
        "SELECT user_json, old_key FROM cms_user_avatar_set($1, $2)", 2);


ngx_http_cms_route_t  ngx_http_cms_avatar_routes[] = {

    { NGX_HTTP_DELETE, ngx_string("/me/avatar"), NGX_HTTP_CMS_AUTH_SESSION,
      0, ngx_http_cms_avatar_delete, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* the body is the image (NGX_HTTP_CMS_BODY_AVATAR) */
ngx_http_cms_route_t  ngx_http_cms_avatar_file_routes[] = {

    { NGX_HTTP_PUT, ngx_string("/me/avatar"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_avatar_put, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* long: the declared type, then the key spelled out, then the write */
static ngx_int_t
ngx_http_cms_avatar_put(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                  *p;
    u_char                   rnd[NGX_HTTP_CMS_AVATAR_RANDOM];
    ngx_int_t                rc;
    ngx_str_t                key;
    ngx_http_cms_avatar_t   *a;

    if (r->request_body == NULL || r->request_body->temp_file == NULL) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     NULL, "The body is the image's bytes,"
                                     " and it is empty");
    }

    a = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_avatar_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_avatar_declared(r, a);
    if (rc != NGX_OK) {
        return rc;
    }

    /* "users/<user id>/<32 hex>": the extension follows the sniff */
    key.len = sizeof("users//") - 1 + ctx->principal.user_id.len
              + 2 * NGX_HTTP_CMS_AVATAR_RANDOM;
    key.data = ngx_pnalloc(r->pool, key.len);

    if (key.data == NULL
        || ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    p = ngx_sprintf(key.data, "users/%V/", &ctx->principal.user_id);
    ngx_hex_dump(p, rnd, sizeof(rnd));

    a->st = ngx_http_cms_store_create(r, &key);
    if (a->st == NULL) {
        return NGX_ERROR;
    }

    a->st->fd = r->request_body->temp_file->file.fd;
    ctx->data = a;

    return ngx_http_cms_store_write(r, a->st, ngx_http_cms_avatar_written);
}


/* a Content-Type other than application/octet-stream names a raster */
static ngx_int_t
ngx_http_cms_avatar_declared(ngx_http_request_t *r, ngx_http_cms_avatar_t *a)
{
    u_char           *v;
    size_t            len;
    const char       *ext;
    ngx_table_elt_t  *h;

    h = r->headers_in.content_type;

    if (h == NULL) {
        return NGX_OK;
    }

    v = h->value.data;
    len = h->value.len;

    if (len == 0
        || (len >= sizeof("application/octet-stream") - 1
            && ngx_strncasecmp(v, (u_char *) "application/octet-stream",
                               sizeof("application/octet-stream") - 1)
               == 0
            && (len == sizeof("application/octet-stream") - 1
                || v[sizeof("application/octet-stream") - 1] == ';')))
    {
        return NGX_OK;
    }

    if (cms_mime_valid((char *) v, len)) {
        ext = cms_mime_ext((char *) v, len);

        if (ngx_http_cms_avatar_raster(ext)) {
            a->declared = ext;
            return NGX_OK;
        }
    }

    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, NULL,
                                 "An avatar is a PNG, JPEG, GIF or WebP"
                                 " image: Content-Type names another type");
}


/* 1 when the storage table's extension "ext" is of a raster taken */
static ngx_uint_t
ngx_http_cms_avatar_raster(const char *ext)
{
    ngx_uint_t  i;

    for (i = 0; ngx_http_cms_avatar_exts[i]; i++) {
        if (ngx_strcmp(ext, ngx_http_cms_avatar_exts[i]) == 0) {
            return 1;
        }
    }

    return 0;
}


/* the bytes are beside their place: a raster of the cap, or refused */
static ngx_int_t
ngx_http_cms_avatar_written(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    const char             *ext, *msg;
    ngx_uint_t              code;
    ngx_http_cms_store_t   *st = data;
    ngx_http_cms_avatar_t  *a = ctx->data;

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        return ngx_http_cms_store_failed(r, st);
    }

    /* the body filter stopped a longer body: this holds it to the byte */
    if (st->size > ngx_http_cms_body_cap(r, NGX_HTTP_CMS_BODY_AVATAR, &code))
    {
        return ngx_http_cms_store_refuse(r, st, NGX_HTTP_CMS_STORE_DISCARD,
                                         ngx_http_cms_fail(r, code, NULL));
    }

    ext = ngx_http_cms_store_type_ext(st);
    msg = ngx_http_cms_avatar_refusal(a, ext);

    if (msg != NULL) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: avatar refused: the bytes are \"%s\"", st->type);

        return ngx_http_cms_store_refuse(r, st, NGX_HTTP_CMS_STORE_DISCARD,
                   ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                         NULL, msg));
    }

    if (ngx_http_cms_store_extend(r, st, ext) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_store_finish(r, st, NGX_HTTP_CMS_STORE_COMMIT,
                                     ngx_http_cms_avatar_committed);
}


/* why the sniffed bytes (of extension "ext") are no avatar; NULL: taken */
static const char *
ngx_http_cms_avatar_refusal(ngx_http_cms_avatar_t *a, const char *ext)
{
    switch (ngx_http_cms_store_verdict(a->st)) {

    case NGX_HTTP_CMS_STORE_EMPTY:
        return "The file is empty";

    case NGX_HTTP_CMS_STORE_EXECUTABLE:
        return "The file's bytes are of a type that runs as script";

    default:
        break;
    }

    if (!ngx_http_cms_avatar_raster(ext)) {
        return "The file's bytes are not a PNG, JPEG, GIF or WebP image";
    }

    if (a->declared != NULL && ngx_strcmp(a->declared, ext) != 0) {
        return "The file's bytes are not of its declared content type";
    }

    return NULL;
}


/* the picture is in place: the user's row names it */
static ngx_int_t
ngx_http_cms_avatar_committed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_str_t              args[2];
    ngx_http_cms_store_t  *st = data;

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        return ngx_http_cms_store_failed(r, st);
    }

    args[0] = ctx->principal.user_id;
    args[1] = st->key;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_avatar_set_sql, args, 2,
                                 ngx_http_cms_avatar_set);
}


static ngx_int_t
ngx_http_cms_avatar_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t               args[2];
    ngx_http_cms_avatar_t  *a;

    a = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_avatar_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    ctx->data = a;

    args[0] = ctx->principal.user_id;
    ngx_str_null(&args[1]);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_avatar_set_sql, args, 2,
                                 ngx_http_cms_avatar_set);
}


/* long: the answer kept, then the picture replaced removed, if any */
static ngx_int_t
ngx_http_cms_avatar_set(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t               rc;
    ngx_str_t               old;
    cms_filekey_t           k;
    ngx_http_cms_avatar_t  *a = ctx->data;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);

    if (rc == NGX_OK && PQntuples(res) != 1) {
        /* the account ended since the credential was checked */
        rc = ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    if (rc != NGX_OK) {
        if (a->st == NULL) {
            return rc;
        }

        /* the new picture is in place, and named by nothing */
        return ngx_http_cms_store_refuse(r, a->st, NGX_HTTP_CMS_STORE_REMOVE,
                                         rc);
    }

    if (a->st != NULL) {
        a->answer.len = sizeof("{\"user\":}") - 1 + PQgetlength(res, 0, 0);
        a->answer.data = ngx_pnalloc(r->pool, a->answer.len);
        if (a->answer.data == NULL) {
            return NGX_ERROR;
        }

        ngx_sprintf(a->answer.data, "{\"user\":%*s}",
                    (size_t) PQgetlength(res, 0, 0), PQgetvalue(res, 0, 0));
    }

    old.data = (u_char *) PQgetvalue(res, 0, 1);
    old.len = PQgetlength(res, 0, 1);

    if (PQgetisnull(res, 0, 1)
        || !cms_filekey_parse((char *) old.data, old.len, &k))
    {
        return ngx_http_cms_avatar_removed(r, ctx, NULL);
    }

    return ngx_http_cms_store_remove(r, &old, ngx_http_cms_avatar_removed);
}


/* 200 with the user after a PUT, 204 after a DELETE */
static ngx_int_t
ngx_http_cms_avatar_removed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_avatar_t  *a = ctx->data;

    if (a->st == NULL) {
        return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &a->answer);
    }

    return ngx_http_cms_send(r, NGX_HTTP_OK, &a->answer);
}
