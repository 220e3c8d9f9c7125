
/*
 * The S3 backend's exchanges (ngx_http_cms_s3.h): the SigV4 signature of
 * each, and the two ways one goes out through nginx's upstream machinery,
 * a jump to "@cms_s3" for reads and a subrequest to "/_cms_s3" for writes
 * and deletes.  The signing key is derived once a day per worker (the
 * sigv4 cache lives in the configuration, which each worker has its own
 * copy of after fork).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_s3_int.h"
#include "cms_filekey.h"
#include "cms_mime.h"
#include "cms_sigv4.h"


static void ngx_http_cms_s3_set(ngx_http_request_t *r, ngx_str_t *vars);
static ngx_int_t ngx_http_cms_s3_open(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_body(ngx_http_request_t *sr,
    ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_last(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);
static ngx_int_t ngx_http_cms_s3_answered(ngx_http_request_t *sr,
    void *data, ngx_int_t rc);
static void ngx_http_cms_s3_resume(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_s3_target(ngx_pool_t *pool,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *root, ngx_str_t *method,
    ngx_str_t *key, ngx_str_t *query, u_char *sha256, ngx_str_t *vars);

static void ngx_http_cms_s3_scope(ngx_http_cms_s3_conf_t *scf,
    cms_sigv4_scope_t *sc);
static void ngx_http_cms_s3_unset(ngx_http_request_t *r, ngx_uint_t i);
static ngx_int_t ngx_http_cms_s3_authorize(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_cms_s3_conf_t *scf, ngx_str_t *vars,
    size_t path_len, ngx_str_t *query);
static ngx_int_t ngx_http_cms_s3_presign(ngx_http_request_t *r,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *key, ngx_str_t *query,
    ngx_str_t *url);


static ngx_str_t  ngx_http_cms_s3_read_location = ngx_string("@cms_s3");
static ngx_str_t  ngx_http_cms_s3_location = ngx_string("/_cms_s3");
ngx_str_t  ngx_http_cms_s3_put = ngx_string("PUT");
static ngx_str_t  ngx_http_cms_s3_get = ngx_string("GET");
ngx_str_t  ngx_http_cms_s3_delete = ngx_string("DELETE");



/* reads */

/* long: the overrides, then a presigned URL or the jump */
ngx_int_t
ngx_http_cms_s3_read(ngx_http_request_t *r, ngx_str_t *key, const char *type,
    ngx_str_t *cache, ngx_str_t *disposition, ngx_str_t *location)
{
    u_char                  *p;
    size_t                   n;
    ngx_str_t                query, vars[NGX_HTTP_CMS_S3_VARS];
    ngx_http_cms_s3_conf_t  *scf;

    /* the bucket's overrides: its 200, 206 and 304 carry these, whatever
       the object was stored with, and its errors none of them */
    n = ngx_strlen(type);
    scf = ((ngx_http_cms_main_conf_t *)
           ngx_http_get_module_main_conf(r, ngx_http_cms_module))->s3;

    query.data = ngx_pnalloc(r->pool,
                             sizeof("response-cache-control=&"
                                    "response-content-disposition=&"
                                    "response-content-type="
                                    "&X-Amz-Security-Token=")
                             + 3 * (cache->len + disposition->len + n
                                    + scf->token.len));
    if (query.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_http_cms_s3_param(query.data, "response-cache-control=",
                              cache->data, cache->len);

    if (disposition->len) {
        p = ngx_http_cms_s3_param(p, "&response-content-disposition=",
                                  disposition->data, disposition->len);
    }

    p = ngx_http_cms_s3_param(p, "&response-content-type=", (u_char *) type,
                              n);
    query.len = p - query.data;

    if (scf->redirect) {
        /* a session's token goes in the URL, signed with the rest */
        if (scf->token.len) {
            p = ngx_http_cms_s3_param(p, "&X-Amz-Security-Token=",
                                      scf->token.data, scf->token.len);
            query.len = p - query.data;
        }

        return ngx_http_cms_s3_presign(r, scf, key, &query, location);
    }

    /* GET for a HEAD too: proxy_cache sends a HEAD as GET, and nginx
       sends a HEAD's client no body either way */
    if (ngx_http_cms_s3_target(r->pool, scf, &scf->root,
                               &ngx_http_cms_s3_get, key, &query, NULL, vars)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_http_cms_s3_set(r, vars);

    /* signed when the location asks (a cache hit never does) */
    ngx_http_cms_s3_unset(r, NGX_HTTP_CMS_S3_AUTHORIZATION);
    ngx_http_cms_s3_unset(r, NGX_HTTP_CMS_S3_DATE);

    /*
     * The jump clears the modules' contexts (the request's is gone) and
     * takes a reference of its own, dropped here as try_files does; the
     * pipeline's goes with the content handler's NGX_DONE.
     */
    (void) ngx_http_named_location(r, &ngx_http_cms_s3_read_location);
    ngx_http_finalize_request(r, NGX_DONE);

    return NGX_DONE;
}


ngx_uint_t
ngx_http_cms_s3_status(ngx_http_request_t *r, ngx_uint_t status)
{
    ngx_http_variable_value_t  *v;

    v = &r->variables[ngx_http_cms_s3_index[NGX_HTTP_CMS_S3_URL]];

    if (!v->valid || v->not_found || status == NGX_HTTP_NOT_FOUND
        || status == NGX_HTTP_RANGE_NOT_SATISFIABLE)
    {
        return status;
    }

    /* the bucket refused us (a key, a clock, its own failure) */
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "cms: the bucket answered %ui to a read of \"%V\"",
                  status, &r->uri);

    return NGX_HTTP_SERVICE_UNAVAILABLE;
}


/* reads=redirect: the object's URL signed in its query, for expires= */
/* long: the request, the query's size, then the URL written */
static ngx_int_t
ngx_http_cms_s3_presign(ngx_http_request_t *r, ngx_http_cms_s3_conf_t *scf,
    ngx_str_t *key, ngx_str_t *query, ngx_str_t *url)
{
    int                   rc;
    u_char               *p;
    size_t                size, path;
    cms_sigv4_scope_t     sc;
    cms_sigv4_header_t    h;
    cms_sigv4_request_t   rq;

    path = scf->root.len + key->len;

    url->data = ngx_pnalloc(r->pool, scf->origin.len + path + 1);
    if (url->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(url->data, scf->origin.data, scf->origin.len);
    p = ngx_cpymem(p, scf->root.data, scf->root.len);
    p = ngx_cpymem(p, key->data, key->len);

    h.name = "host";
    h.name_len = 4;
    h.value = (const char *) scf->host.data;
    h.value_len = scf->host.len;

    ngx_memzero(&rq, sizeof(cms_sigv4_request_t));
    rq.method = (const char *) r->method_name.data;
    rq.method_len = r->method_name.len;
    rq.path = (const char *) url->data + scf->origin.len;
    rq.path_len = path;
    rq.query = (const char *) query->data;
    rq.query_len = query->len;
    rq.headers = &h;
    rq.nheaders = 1;
    rq.flags = CMS_SIGV4_S3;
    rq.expires = (unsigned) (scf->expires / 1000);

    ngx_http_cms_s3_scope(scf, &sc);

    rc = cms_sigv4_size(&rq, &sc, CMS_SIGV4_PRESIGNED_QUERY, &size);

    if (rc == CMS_SIGV4_OK) {
        /* the path copied again, then "?" and the signed query */
        p = ngx_pnalloc(r->pool, scf->origin.len + path + 1 + size);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(p, url->data, scf->origin.len + path);
        url->data = p;
        p += scf->origin.len + path;
        *p++ = '?';

        rc = cms_sigv4_text(&rq, &sc, CMS_SIGV4_PRESIGNED_QUERY, (char *) p,
                            size);
        url->len = scf->origin.len + path + size;
    }

    if (rc != CMS_SIGV4_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: presigning \"%V\" failed: %s", key,
                      cms_sigv4_error(rc));
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* writes and deletes */

/* an exchange's state in r->pool, its caller's done() and key */
static ngx_http_cms_s3_op_t *
ngx_http_cms_s3_op(ngx_http_request_t *r, ngx_str_t *key,
    ngx_http_cms_s3_done_pt done, void *data)
{
    ngx_http_cms_s3_op_t  *op;

    op = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_s3_op_t));
    if (op == NULL) {
        return NULL;
    }

    op->done = done;
    op->data = data;
    op->key = *key;

    return op;
}


ngx_int_t
ngx_http_cms_s3_send(ngx_http_request_t *r, ngx_str_t *key, u_char *path,
    off_t size, u_char *sha256, ngx_http_cms_s3_done_pt done, void *data)
{
    ngx_http_cms_s3_op_t  *op;

    op = ngx_http_cms_s3_op(r, key, done, data);
    if (op == NULL) {
        return NGX_ERROR;
    }

    op->path = path;
    op->size = size;

    if (path == NULL) {
        return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_delete, NULL,
                                        NULL, NULL, ngx_http_cms_s3_last);
    }

    if (ngx_http_cms_s3_multipart(r, op)) {
        return ngx_http_cms_s3_parts(r, op);
    }

    op->body_len = size;

    return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_put, NULL, sha256,
                                    ngx_http_cms_s3_type(key),
                                    ngx_http_cms_s3_last);
}


ngx_int_t
ngx_http_cms_s3_head(ngx_http_request_t *r, ngx_str_t *key,
    ngx_http_cms_s3_done_pt done, void *data)
{
    return ngx_http_cms_s3_put_bytes(r, key, NULL, NULL, done, data);
}


ngx_int_t
ngx_http_cms_s3_put_bytes(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *body, u_char *sha256, ngx_http_cms_s3_done_pt done,
    void *data)
{
    ngx_http_cms_s3_op_t  *op;

    static ngx_str_t  head = ngx_string("HEAD");

    op = ngx_http_cms_s3_op(r, key, done, data);
    if (op == NULL) {
        return NGX_ERROR;
    }

    if (body == NULL) {
        return ngx_http_cms_s3_exchange(r, op, &head, NULL, NULL, NULL,
                                        ngx_http_cms_s3_last);
    }

    op->body = *body;
    op->size = body->len;

    return ngx_http_cms_s3_exchange(r, op, &ngx_http_cms_s3_put, NULL, sha256,
                                    ngx_http_cms_s3_type(key),
                                    ngx_http_cms_s3_last);
}


/*
 * One exchange with the bucket: "method" on the op's key (and "query"),
 * its body the op's file range (body_off, body_len) or memory (body), a
 * subrequest to "/_cms_s3"; then next(r, ctx, op) with op->status,
 * op->answer and op->etag set.
 */
/* long: the signature, the subrequest, its variables and body */
ngx_int_t
ngx_http_cms_s3_exchange(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op,
    ngx_str_t *method, ngx_str_t *query, u_char *sha256, const char *type,
    ngx_http_cms_s3_step_pt next)
{
    ngx_str_t                    vars[NGX_HTTP_CMS_S3_VARS];
    ngx_http_request_t          *sr;
    ngx_http_cms_ctx_t          *ctx;
    ngx_http_post_subrequest_t  *ps;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));

    if (ps == NULL
        || ngx_http_cms_s3_sign(r->pool, r->connection->log,
                                ngx_http_cms_s3_scf(r), NULL, method,
                                &op->key, query, sha256, type, vars)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the staged file opened once, before any subrequest exists */
    if (op->body_len && op->file == NULL
        && ngx_http_cms_s3_open(r, op) != NGX_OK)
    {
        return NGX_ERROR;
    }

    op->method = *method;
    op->next = next;
    op->status = 0;
    ngx_str_null(&op->answer);
    ngx_str_null(&op->etag);

    ps->handler = ngx_http_cms_s3_answered;
    ps->data = op;

    if (ngx_http_subrequest(r, &ngx_http_cms_s3_location, NULL, &sr, ps,
                            NGX_HTTP_SUBREQUEST_IN_MEMORY
                            | NGX_HTTP_SUBREQUEST_WAITED)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the subrequest has not run yet: its variables are set before */
    ngx_http_cms_s3_set(sr, vars);

    if (ngx_http_cms_s3_body(sr, op) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->outbound = op;
    r->write_event_handler = ngx_http_cms_s3_resume;

    return NGX_DONE;
}


/* the staged file, open until the request ends (every part reads it) */
static ngx_int_t
ngx_http_cms_s3_open(ngx_http_request_t *r, ngx_http_cms_s3_op_t *op)
{
    ngx_pool_cleanup_t       *cln;
    ngx_pool_cleanup_file_t  *clnf;

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_pool_cleanup_file_t));
    op->file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));

    if (cln == NULL || op->file == NULL) {
        return NGX_ERROR;
    }

    /* a plain open of a file this request staged, as files.c's reads */
    op->file->fd = ngx_open_file(op->path, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);

    if (op->file->fd == NGX_INVALID_FILE) {
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, ngx_errno,
                      ngx_open_file_n " \"%s\" failed", op->path);
        op->file = NULL;
        return NGX_ERROR;
    }

    op->file->name.data = op->path;
    op->file->name.len = ngx_strlen(op->path);
    op->file->log = r->connection->log;

    clnf = cln->data;
    clnf->fd = op->file->fd;
    clnf->name = op->path;
    clnf->log = r->connection->log;
    cln->handler = ngx_pool_cleanup_file;

    return NGX_OK;
}


/* the staged file's range, the bytes in memory, or no body */
static ngx_int_t
ngx_http_cms_s3_body(ngx_http_request_t *sr, ngx_http_cms_s3_op_t *op)
{
    ngx_buf_t                *b;
    ngx_chain_t              *cl;
    ngx_http_request_body_t  *rb;

    rb = ngx_pcalloc(sr->pool, sizeof(ngx_http_request_body_t));
    b = ngx_calloc_buf(sr->pool);
    cl = ngx_alloc_chain_link(sr->pool);

    if (rb == NULL || b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    sr->request_body = rb;
    sr->headers_in.content_length_n = op->body.len + op->body_len;

    cl->buf = b;
    cl->next = NULL;
    b->last_buf = 1;

    if (op->body.len) {
        b->start = op->body.data;
        b->pos = op->body.data;
        b->last = op->body.data + op->body.len;
        b->end = b->last;
        b->memory = 1;
        rb->bufs = cl;
        return NGX_OK;
    }

    if (op->body_len == 0) {
        return NGX_OK;
    }

    b->file = op->file;
    b->in_file = 1;
    b->file_pos = op->body_off;
    b->file_last = op->body_off + op->body_len;

    rb->bufs = cl;

    return NGX_OK;
}


/* in the subrequest, once it is done: what the bucket said */
static ngx_int_t
ngx_http_cms_s3_answered(ngx_http_request_t *sr, void *data, ngx_int_t rc)
{
    ngx_http_cms_s3_op_t *op = data;

    size_t  n;

    op->status = (rc == NGX_OK) ? sr->headers_out.status : 0;

    if (sr->out && sr->out->buf) {
        op->answer.data = sr->out->buf->pos;
        op->answer.len = sr->out->buf->last - sr->out->buf->pos;
    }

    if (sr->headers_out.etag) {
        op->etag = sr->headers_out.etag->value;
    }

    if (op->status < 200 || op->status > 299) {
        n = ngx_min(op->answer.len, 300);

        /* the bucket's error names its code: SignatureDoesNotMatch... */
        ngx_log_error(NGX_LOG_ERR, sr->connection->log, 0,
                      "cms: the bucket answered %ui to \"%V %V\"%s%*s",
                      op->status, &op->method, &op->key,
                      n ? ": " : "", n, op->answer.data);
    }

    return NGX_OK;
}


static void
ngx_http_cms_s3_resume(ngx_http_request_t *r)
{
    ngx_int_t              rc;
    ngx_http_cms_ctx_t    *ctx;
    ngx_http_cms_s3_op_t  *op;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    op = ctx->outbound;
    ctx->outbound = NULL;

    r->write_event_handler = ngx_http_request_empty_handler;

    rc = op->next(r, ctx, op);

    if (rc == NGX_ERROR && !op->reported) {
        /* the next exchange could not start: the caller's failure (its
           staged file removed, its claim released) */
        rc = ngx_http_cms_s3_report(r, ctx, op, 0);
    }

    ctx->finish(r, rc);
}


/* the last exchange: the caller's turn */
static ngx_int_t
ngx_http_cms_s3_last(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op)
{
    return ngx_http_cms_s3_report(r, ctx, op, op->status);
}


/* the caller's done(), once; a 2xx only when the object is stored */
ngx_int_t
ngx_http_cms_s3_report(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_s3_op_t *op, ngx_uint_t status)
{
    op->reported = 1;

    return op->done(r, ctx, op->data, status);
}


/* the Content-Type an object is stored with: its key's extension's */
const char *
ngx_http_cms_s3_type(ngx_str_t *key)
{
    cms_filekey_t  k;

    if (!cms_filekey_parse((char *) key->data, key->len, &k)) {
        return "application/octet-stream";
    }

    return cms_mime_ext_type((const char *) key->data + k.ext, k.ext_len);
}


/* the signature */

/* where the request goes: its URL, path, Host, date and payload hash */
/* long: one buffer for the URL, the hash and the date */
static ngx_int_t
ngx_http_cms_s3_target(ngx_pool_t *pool, ngx_http_cms_s3_conf_t *scf,
    ngx_str_t *root, ngx_str_t *method, ngx_str_t *key, ngx_str_t *query,
    u_char *sha256, ngx_str_t *vars)
{
    u_char  *p;
    size_t   n;

    ngx_memzero(vars, sizeof(ngx_str_t) * NGX_HTTP_CMS_S3_VARS);

    /* origin "/bucket/prefix" key "?" query */
    n = root->len + key->len + (query ? 1 + query->len : 0);

    p = ngx_pnalloc(pool, scf->origin.len + n + CMS_SIGV4_DATE_LEN + 1
                             + CMS_SIGV4_HEX_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    vars[NGX_HTTP_CMS_S3_URL].data = p;
    p = ngx_cpymem(p, scf->origin.data, scf->origin.len);
    vars[NGX_HTTP_CMS_S3_URI].data = p;
    p = ngx_cpymem(p, root->data, root->len);
    p = ngx_cpymem(p, key->data, key->len);

    if (query) {
        *p++ = '?';
        p = ngx_cpymem(p, query->data, query->len);
    }

    vars[NGX_HTTP_CMS_S3_URL].len = p - vars[NGX_HTTP_CMS_S3_URL].data;
    vars[NGX_HTTP_CMS_S3_URI].len = n;

    vars[NGX_HTTP_CMS_S3_SHA256].data = p;
    vars[NGX_HTTP_CMS_S3_SHA256].len = CMS_SIGV4_HEX_LEN;
    p = ngx_cpymem(p, sha256 ? sha256 : (u_char *) CMS_SIGV4_EMPTY_HASH,
                   CMS_SIGV4_HEX_LEN);

    vars[NGX_HTTP_CMS_S3_DATE].data = p;
    vars[NGX_HTTP_CMS_S3_DATE].len = CMS_SIGV4_DATE_LEN;

    if (cms_sigv4_amz_date(ngx_time(), (char *) p) != CMS_SIGV4_OK) {
        return NGX_ERROR;
    }

    vars[NGX_HTTP_CMS_S3_HOST] = scf->host;
    vars[NGX_HTTP_CMS_S3_METHOD] = *method;
    vars[NGX_HTTP_CMS_S3_TOKEN] = scf->token;

    return NGX_OK;
}


/* the target, then its signature */
ngx_int_t
ngx_http_cms_s3_sign(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *root, ngx_str_t *method,
    ngx_str_t *key, ngx_str_t *query, u_char *sha256, const char *type,
    ngx_str_t *vars)
{
    if (root == NULL) {
        root = &scf->root;
    }

    if (ngx_http_cms_s3_target(pool, scf, root, method, key, query, sha256,
                               vars)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (type) {
        vars[NGX_HTTP_CMS_S3_TYPE].data = (u_char *) type;
        vars[NGX_HTTP_CMS_S3_TYPE].len = ngx_strlen(type);
    }

    return ngx_http_cms_s3_authorize(pool, log, scf, vars,
                                     root->len + key->len, query);
}


/*
 * The Authorization value of the request "vars" describe (method, URI,
 * Host, date, payload hash, type, token; the path is the URI's first
 * path_len bytes), signed now; into vars.
 */
/* long: the headers signed, the request, then the value's text */
static ngx_int_t
ngx_http_cms_s3_authorize(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *vars, size_t path_len,
    ngx_str_t *query)
{
    int                   rc;
    u_char               *p;
    size_t                size, n;
    cms_sigv4_scope_t     sc;
    cms_sigv4_header_t    h[5];
    cms_sigv4_request_t   rq;

    n = 0;

#define ngx_http_cms_s3_header(nm, v)                                         \
    h[n].name = nm; h[n].name_len = sizeof(nm) - 1;                           \
    h[n].value = (const char *) (v).data; h[n].value_len = (v).len; n++

    if (vars[NGX_HTTP_CMS_S3_TYPE].len) {
        ngx_http_cms_s3_header("content-type", vars[NGX_HTTP_CMS_S3_TYPE]);
    }

    ngx_http_cms_s3_header("host", vars[NGX_HTTP_CMS_S3_HOST]);
    ngx_http_cms_s3_header("x-amz-content-sha256",
                           vars[NGX_HTTP_CMS_S3_SHA256]);
    ngx_http_cms_s3_header("x-amz-date", vars[NGX_HTTP_CMS_S3_DATE]);

    if (vars[NGX_HTTP_CMS_S3_TOKEN].len) {
        ngx_http_cms_s3_header("x-amz-security-token",
                               vars[NGX_HTTP_CMS_S3_TOKEN]);
    }

    ngx_memzero(&rq, sizeof(cms_sigv4_request_t));
    rq.method = (const char *) vars[NGX_HTTP_CMS_S3_METHOD].data;
    rq.method_len = vars[NGX_HTTP_CMS_S3_METHOD].len;
    rq.path = (const char *) vars[NGX_HTTP_CMS_S3_URI].data;
    rq.path_len = path_len;
    rq.query = query ? (const char *) query->data : NULL;
    rq.query_len = query ? query->len : 0;
    rq.headers = h;
    rq.nheaders = n;
    rq.payload_hash = (const char *) vars[NGX_HTTP_CMS_S3_SHA256].data;
    rq.payload_hash_len = CMS_SIGV4_HEX_LEN;
    rq.flags = CMS_SIGV4_S3;

    ngx_http_cms_s3_scope(scf, &sc);

    rc = cms_sigv4_size(&rq, &sc, CMS_SIGV4_AUTHORIZATION, &size);

    if (rc == CMS_SIGV4_OK) {
        p = ngx_pnalloc(pool, size);
        if (p == NULL) {
            return NGX_ERROR;
        }

        rc = cms_sigv4_text(&rq, &sc, CMS_SIGV4_AUTHORIZATION, (char *) p,
                            size);
        vars[NGX_HTTP_CMS_S3_AUTHORIZATION].data = p;
        vars[NGX_HTTP_CMS_S3_AUTHORIZATION].len = size - 1;
    }

    if (rc != CMS_SIGV4_OK) {
        ngx_log_error(NGX_LOG_ALERT, log, 0,
                      "cms: signing \"%V %*s\" for the bucket failed: %s",
                      &vars[NGX_HTTP_CMS_S3_METHOD], path_len, rq.path,
                      cms_sigv4_error(rc));
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * $cms_s3_authorization and $cms_s3_date of a read: signed when the
 * location first asks for either, so that a read proxy_cache answers
 * costs no signature; both then kept in the request's variables
 */
/* long: the request's values gathered, then the two set */
ngx_int_t
ngx_http_cms_s3_signed_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                     *q;
    size_t                      path_len;
    ngx_str_t                   vars[NGX_HTTP_CMS_S3_VARS], query;
    ngx_uint_t                  i;
    ngx_http_cms_s3_conf_t     *scf;
    ngx_http_variable_value_t  *x;

    scf = ((ngx_http_cms_main_conf_t *)
           ngx_http_get_module_main_conf(r, ngx_http_cms_module))->s3;
    x = &r->variables[ngx_http_cms_s3_index[NGX_HTTP_CMS_S3_URI]];

    if (scf == NULL || !x->valid || x->not_found) {
        v->not_found = 1;
        return NGX_OK;
    }

    for (i = 0; i < NGX_HTTP_CMS_S3_VARS; i++) {
        x = &r->variables[ngx_http_cms_s3_index[i]];
        vars[i].data = x->data;
        vars[i].len = (x->valid && !x->not_found) ? x->len : 0;
    }

    vars[NGX_HTTP_CMS_S3_DATE].data = ngx_pnalloc(r->pool,
                                                  CMS_SIGV4_DATE_LEN + 1);
    if (vars[NGX_HTTP_CMS_S3_DATE].data == NULL
        || cms_sigv4_amz_date(ngx_time(),
                              (char *) vars[NGX_HTTP_CMS_S3_DATE].data)
           != CMS_SIGV4_OK)
    {
        return NGX_ERROR;
    }

    vars[NGX_HTTP_CMS_S3_DATE].len = CMS_SIGV4_DATE_LEN;

    q = ngx_strlchr(vars[NGX_HTTP_CMS_S3_URI].data,
                    vars[NGX_HTTP_CMS_S3_URI].data
                    + vars[NGX_HTTP_CMS_S3_URI].len, '?');
    path_len = q ? (size_t) (q - vars[NGX_HTTP_CMS_S3_URI].data)
                 : vars[NGX_HTTP_CMS_S3_URI].len;

    if (q) {
        query.data = q + 1;
        query.len = vars[NGX_HTTP_CMS_S3_URI].len - path_len - 1;
    }

    if (ngx_http_cms_s3_authorize(r->pool, r->connection->log, scf, vars,
                                  path_len, q ? &query : NULL)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = NGX_HTTP_CMS_S3_AUTHORIZATION; i <= NGX_HTTP_CMS_S3_DATE; i++) {
        x = &r->variables[ngx_http_cms_s3_index[i]];
        x->data = vars[i].data;
        x->len = vars[i].len;
        x->valid = 1;
        x->no_cacheable = 0;
        x->not_found = 0;
        x->escape = 0;
    }

    *v = r->variables[ngx_http_cms_s3_index[data]];

    return NGX_OK;
}


/* who signs, where, and now */
static void
ngx_http_cms_s3_scope(ngx_http_cms_s3_conf_t *scf, cms_sigv4_scope_t *sc)
{
    ngx_memzero(sc, sizeof(cms_sigv4_scope_t));

    sc->key_id = (const char *) scf->key_id.data;
    sc->key_id_len = scf->key_id.len;
    sc->secret = (const char *) scf->secret.data;
    sc->secret_len = scf->secret.len;
    sc->region = (const char *) scf->region.data;
    sc->region_len = scf->region.len;
    sc->service = "s3";
    sc->service_len = 2;
    sc->time = ngx_time();
    sc->cache = &scf->cache;
}


/* variable "i" of r to be evaluated by its handler */
static void
ngx_http_cms_s3_unset(ngx_http_request_t *r, ngx_uint_t i)
{
    ngx_http_variable_value_t  *v;

    v = &r->variables[ngx_http_cms_s3_index[i]];
    v->valid = 0;
    v->not_found = 0;
}


/* the values into r's variables, as if evaluated (not to be again) */
static void
ngx_http_cms_s3_set(ngx_http_request_t *r, ngx_str_t *vars)
{
    ngx_uint_t                  i;
    ngx_http_variable_value_t  *v;

    for (i = 0; i < NGX_HTTP_CMS_S3_VARS; i++) {
        v = &r->variables[ngx_http_cms_s3_index[i]];

        v->data = vars[i].data;
        v->len = vars[i].len;
        v->valid = 1;
        v->no_cacheable = 0;
        v->not_found = (vars[i].len == 0);
        v->escape = 0;
    }
}


/* "name" then value[0 .. len) as a query value: RFC 3986's unreserved
   bytes kept, the rest %XX; p has room for three bytes each */
u_char *
ngx_http_cms_s3_param(u_char *p, const char *name, u_char *value, size_t len)
{
    static const u_char  hex[] = "0123456789ABCDEF";

    u_char  c;
    size_t  i;

    p = ngx_cpymem(p, name, ngx_strlen(name));

    for (i = 0; i < len; i++) {
        c = value[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
            || c == '~')
        {
            *p++ = c;
            continue;
        }

        *p++ = '%';
        *p++ = hex[c >> 4];
        *p++ = hex[c & 0x0f];
    }

    return p;
}
