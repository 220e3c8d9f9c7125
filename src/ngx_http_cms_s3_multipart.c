
/*
 * A multipart upload (docs/object-storage.md): an object above
 * multipart= goes to the bucket in parts of part_size= bytes, each a
 * range of the staged file, never in memory.  First, in the thread pool,
 * the SHA-256 of every part (each part's signature covers its bytes, as a
 * single PUT's does); then, one exchange after the other:
 *
 *   POST <key>?uploads=                       the upload's id
 *   PUT  <key>?partNumber=N&uploadId=ID       each part, its ETag kept
 *   POST <key>?uploadId=ID                    the list of parts: done
 *
 * A part or the completion refused (or unanswered) aborts the upload,
 * DELETE <key>?uploadId=ID, so that the bucket keeps no part; the caller
 * then sees the failure's status.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_s3_int.h"
#include "ngx_http_cms_thread.h"
#include "cms_sigv4.h"


#define NGX_HTTP_CMS_S3_PARTS_MAX  10000     /* S3's */
#define NGX_HTTP_CMS_S3_READ       65536


static void ngx_http_cms_s3_hash_parts(void *data);
static ngx_int_t ngx_http_cms_s3_hashed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_s3_initiated(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_part(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_parted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_complete(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_completed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_abort(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_aborted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);
static ngx_uint_t ngx_http_cms_s3_failure(ngx_uint_t status);
static ngx_int_t ngx_http_cms_s3_query(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op, ngx_uint_t part, ngx_str_t *query);


static ngx_str_t  ngx_http_cms_s3_post = ngx_string("POST");
static ngx_str_t  ngx_http_cms_s3_uploads = ngx_string("uploads=");


ngx_uint_t
ngx_http_cms_s3_multipart(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    return op->size > mcf->s3->multipart;
}


ngx_int_t
ngx_http_cms_s3_parts(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    off_t                      part;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    part = mcf->s3->part_size;

    op->parts = (ngx_uint_t) ((op->size + part - 1) / part);

    if (op->parts > NGX_HTTP_CMS_S3_PARTS_MAX) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: \"%V\" needs %ui parts of %O bytes, more than "
                      "the bucket takes", &op->key, op->parts, part);
        return ngx_http_cms_s3_report(r,
                                      ngx_http_get_module_ctx(r,
                                                      ngx_http_cms_module),
                                      op, 0);
    }

    op->hashes = ngx_pnalloc(r->pool, op->parts * CMS_SIGV4_HEX_LEN);
    op->etags = ngx_pcalloc(r->pool, op->parts * sizeof(ngx_str_t));
    op->body_len = part;     /* the part size, for the thread */

    if (op->hashes == NULL || op->etags == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_cms_thread_run(r, ngx_http_cms_s3_hash_parts, op,
                                   ngx_http_cms_s3_hashed);
}


/* in a pool thread: the SHA-256 of each part of the staged file */
/* long: a part at a time, each read to its end */
static void
ngx_http_cms_s3_hash_parts(void *data)
{
    ngx_http_cms_s3_op_t *op = data;

    int         fd;
    void       *hash;
    u_char      buf[NGX_HTTP_CMS_S3_READ];
    off_t       left, part;
    ssize_t     n;
    ngx_uint_t  i;

    part = op->body_len;
    op->status = 0;

    fd = open((char *) op->path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return;
    }

    for (i = 0; i < op->parts; i++) {
        hash = ngx_http_cms_crypto_sha256_begin();
        if (hash == NULL) {
            break;
        }

        left = ngx_min(part, op->size - (off_t) i * part);

        while (left > 0) {
            n = read(fd, buf, (size_t) ngx_min(left, (off_t) sizeof(buf)));

            if (n <= 0
                || ngx_http_cms_crypto_sha256_update(hash, buf, n) != NGX_OK)
            {
                break;
            }

            left -= n;
        }

        if (ngx_http_cms_crypto_sha256_end(hash,
                                           op->hashes + i * CMS_SIGV4_HEX_LEN)
            != NGX_OK
            || left != 0)
        {
            break;
        }
    }

    (void) close(fd);

    /* 1: every part hashed */
    op->status = (i == op->parts);
}


static ngx_int_t
ngx_http_cms_s3_hashed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_s3_op_t *op = data;

    ngx_int_t  rc;

    if (op->status != 1) {
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, 0,
                      "cms: hashing the parts of \"%s\" failed", op->path);
        return ngx_http_cms_s3_report(r, ctx, op, 0);
    }

    op->body_len = 0;

    rc = ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_post,
                                  &ngx_http_cms_s3_uploads, NULL,
                                  ngx_http_cms_s3_type(&op->key),
                                  ngx_http_cms_s3_initiated);

    return (rc == NGX_ERROR) ? ngx_http_cms_s3_report(r, ctx, op, 0) : rc;
}


/* a failure's status for the caller: never a 2xx (0: no usable answer) */
static ngx_uint_t
ngx_http_cms_s3_failure(ngx_uint_t status)
{
    return (status >= 200 && status < 300) ? 0 : status;
}


/* the upload's id, from <UploadId>...</UploadId> */
static ngx_int_t
ngx_http_cms_s3_initiated(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op)
{
    u_char  *p, *end, *last;

    p = NULL;
    last = NULL;

    if (op->status == NGX_HTTP_OK) {
        last = op->answer.data + op->answer.len;
        p = ngx_strlcasestrn(op->answer.data, last, (u_char *) "<UploadId>",
                             sizeof("<UploadId>") - 2);
    }

    if (p != NULL) {
        p += sizeof("<UploadId>") - 1;
        end = ngx_strlchr(p, last, '<');

        if (end != NULL && end > p && end - p <= 1024) {
            op->upload_id.data = p;
            op->upload_id.len = end - p;
        }
    }

    if (op->upload_id.len == 0) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: the bucket started no multipart upload of "
                      "\"%V\" (%ui)", &op->key, op->status);
        return ngx_http_cms_s3_report(r, ctx, op,
                                      ngx_http_cms_s3_failure(op->status));
    }

    op->part = 1;

    return ngx_http_cms_s3_part(r, op);
}


/* PUT of part op->part: its range of the file, its own hash signed */
static ngx_int_t
ngx_http_cms_s3_part(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    off_t                      part;
    ngx_str_t                  query;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    part = mcf->s3->part_size;

    if (ngx_http_cms_s3_query(r, op, op->part, &query) != NGX_OK) {
        return NGX_ERROR;
    }

    op->body_off = (off_t) (op->part - 1) * part;
    op->body_len = ngx_min(part, op->size - op->body_off);

    return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_put, &query,
                                    op->hashes
                                    + (op->part - 1) * CMS_SIGV4_HEX_LEN,
                                    NULL, ngx_http_cms_s3_parted);
}


static ngx_int_t
ngx_http_cms_s3_parted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op)
{
    ngx_str_t  *etag;

    if (op->status != NGX_HTTP_OK || op->etag.len == 0
        || op->etag.len > 128)
    {
        op->failed = ngx_http_cms_s3_failure(op->status);
        return ngx_http_cms_s3_abort(r, op);
    }

    /* the answer's memory goes with its subrequest: a copy */
    etag = &op->etags[op->part - 1];
    etag->data = ngx_pstrdup(r->pool, &op->etag);
    if (etag->data == NULL) {
        return NGX_ERROR;
    }

    etag->len = op->etag.len;

    if (op->part++ < op->parts) {
        return ngx_http_cms_s3_part(r, op);
    }

    return ngx_http_cms_s3_complete(r, op);
}


/* POST of the parts' list, its hash signed */
/* long: the XML, then its exchange */
static ngx_int_t
ngx_http_cms_s3_complete(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    u_char      *p, *hash;
    size_t       len;
    ngx_str_t    query;
    ngx_uint_t   i;

    if (ngx_http_cms_s3_query(r, op, 0, &query) != NGX_OK) {
        return NGX_ERROR;
    }

    len = sizeof("<CompleteMultipartUpload></CompleteMultipartUpload>");

    for (i = 0; i < op->parts; i++) {
        len += sizeof("<Part><PartNumber></PartNumber><ETag></ETag></Part>")
               + NGX_INT_T_LEN + op->etags[i].len;
    }

    p = ngx_pnalloc(r->pool, len);
    hash = ngx_pnalloc(r->pool, CMS_SIGV4_HEX_LEN + 1);

    if (p == NULL || hash == NULL) {
        return NGX_ERROR;
    }

    op->body.data = p;
    p = ngx_cpymem(p, "<CompleteMultipartUpload>",
                   sizeof("<CompleteMultipartUpload>") - 1);

    /* an ETag is the bucket's quoted hex: nothing in it to escape */
    for (i = 0; i < op->parts; i++) {
        p = ngx_sprintf(p, "<Part><PartNumber>%ui</PartNumber>"
                           "<ETag>%V</ETag></Part>", i + 1, &op->etags[i]);
    }

    p = ngx_cpymem(p, "</CompleteMultipartUpload>",
                   sizeof("</CompleteMultipartUpload>") - 1);
    op->body.len = p - op->body.data;
    op->body_len = 0;

    if (cms_sigv4_payload_hash(op->body.data, op->body.len, (char *) hash)
        != CMS_SIGV4_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_post, &query,
                                    hash, NULL, ngx_http_cms_s3_completed);
}


/* a 200 may still hold an <Error>: only a result is the object */
static ngx_int_t
ngx_http_cms_s3_completed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op)
{
    ngx_str_null(&op->body);

    if (op->status == NGX_HTTP_OK
        && ngx_strlcasestrn(op->answer.data,
                            op->answer.data + op->answer.len,
                            (u_char *) "<CompleteMultipartUploadResult",
                            sizeof("<CompleteMultipartUploadResult") - 2)
           != NULL)
    {
        return ngx_http_cms_s3_report(r, ctx, op, NGX_HTTP_OK);
    }

    op->failed = ngx_http_cms_s3_failure(op->status);

    return ngx_http_cms_s3_abort(r, op);
}


/* DELETE of the upload: the parts sent go too */
static ngx_int_t
ngx_http_cms_s3_abort(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    ngx_str_t  query;

    if (ngx_http_cms_s3_query(r, op, 0, &query) != NGX_OK) {
        return NGX_ERROR;
    }

    op->body_len = 0;
    ngx_str_null(&op->body);

    return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_delete, &query,
                                    NULL, NULL, ngx_http_cms_s3_aborted);
}


static ngx_int_t
ngx_http_cms_s3_aborted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op)
{
    if (op->status < 200 || op->status > 299) {
        /* the bucket's lifecycle rule for incomplete uploads takes them */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: aborting the multipart upload of \"%V\" failed",
                      &op->key);
    }

    return ngx_http_cms_s3_report(r, ctx, op, op->failed);
}


/* "partNumber=N&uploadId=ID" (part > 0), or "uploadId=ID" */
static ngx_int_t
ngx_http_cms_s3_query(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op,
    ngx_uint_t part, ngx_str_t *query)
{
    u_char  *p;

    p = ngx_pnalloc(r->pool, sizeof("partNumber=&uploadId=") + NGX_INT_T_LEN
                             + 3 * op->upload_id.len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    query->data = p;

    if (part) {
        p = ngx_sprintf(p, "partNumber=%ui&", part);
    }

    p = ngx_http_cms_s3_param(p, "uploadId=", op->upload_id.data,
                              op->upload_id.len);
    query->len = p - query->data;

    return NGX_OK;
}
