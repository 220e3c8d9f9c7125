
/*
 * Request bodies.  The body is read by nginx (kept in memory up to
 * client_body_buffer_size, else in its temp file, which is the one file a
 * request may read); here it is checked and parsed with jansson.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_body.h"
#include "ngx_http_cms_resources.h"
#include "cms_json_scan.h"


static ngx_int_t ngx_http_cms_body_count(ngx_http_request_t *r,
    ngx_chain_t *in);
static ngx_int_t ngx_http_cms_body_collect(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, size_t max);
static u_char *ngx_http_cms_body_copy(ngx_http_request_t *r, u_char *p);
static ngx_int_t ngx_http_cms_body_is_json(ngx_http_request_t *r);
static const char *ngx_http_cms_body_reason(json_error_t *err);


static ngx_http_request_body_filter_pt  ngx_http_cms_next_request_body_filter;


off_t
ngx_http_cms_body_cap(ngx_http_request_t *r, ngx_uint_t kind,
    ngx_uint_t *code)
{
    ngx_http_cms_loc_conf_t  *lcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_cms_module);

    switch (kind) {

    case NGX_HTTP_CMS_BODY_FILE:
        *code = NGX_HTTP_CMS_ERR_UPLOAD_TOO_LARGE;
        return (off_t) lcf->upload_max_size;

    case NGX_HTTP_CMS_BODY_AVATAR:
        *code = NGX_HTTP_CMS_ERR_AVATAR_TOO_LARGE;
        return (off_t) lcf->avatar_max_size;

    default: /* NGX_HTTP_CMS_BODY_JSON */
        *code = NGX_HTTP_CMS_ERR_PAYLOAD_TOO_LARGE;
        return (off_t) lcf->body_max_size;
    }
}


ngx_int_t
ngx_http_cms_body_precheck(ngx_http_request_t *r, ngx_uint_t kind)
{
    ngx_uint_t  code;

    if (r->headers_in.content_length_n > ngx_http_cms_body_cap(r, kind, &code))
    {
        return ngx_http_cms_fail(r, code, NULL);
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_body_init(ngx_conf_t *cf)
{
    ngx_http_cms_next_request_body_filter = ngx_http_top_request_body_filter;
    ngx_http_top_request_body_filter = ngx_http_cms_body_count;

    return NGX_OK;
}


/* the bytes of a body read for the pipeline, counted against its cap */
static ngx_int_t
ngx_http_cms_body_count(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_uint_t           code;
    ngx_chain_t         *cl;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL || ctx->route == NULL || r != r->main) {
        return ngx_http_cms_next_request_body_filter(r, in);
    }

    for (cl = in; cl; cl = cl->next) {
        ctx->body_size += ngx_buf_size(cl->buf);
    }

    if (ctx->body_size > ngx_http_cms_body_cap(r, ctx->body_file, &code)) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: the body is over its cap after %O bytes",
                      ctx->body_size);

        (void) ngx_http_cms_fail(r, code, NULL);

        return NGX_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }

    return ngx_http_cms_next_request_body_filter(r, in);
}


ngx_int_t
ngx_http_cms_body_parse(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t                   *json;
    ngx_int_t                 rc;
    json_error_t              err;
    ngx_http_cms_loc_conf_t  *lcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_cms_module);

    rc = ngx_http_cms_body_collect(r, ctx, lcf->body_max_size);

    if (rc != NGX_OK || ctx->raw_body.len == 0) {
        return rc;
    }

    if (ngx_http_cms_body_is_json(r) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNSUPPORTED_MEDIA_TYPE,
                                 NULL);
    }

    if (!cms_json_depth_ok(ctx->raw_body.data, ctx->raw_body.len,
                           lcf->json_max_depth))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_TOO_DEEP, NULL);
    }

    json = json_loadb((char *) ctx->raw_body.data, ctx->raw_body.len,
                      JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);

    if (json == NULL) {
        /*
         * jansson's err.text quotes the failing token, which may be a
         * password: only the reason and the position are logged
         */
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: invalid json body: %s at line %d, column %d "
                      "(byte %d)", ngx_http_cms_body_reason(&err), err.line,
                      err.column, err.position);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_JSON, NULL);
    }

    if (ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->body = json;

    return NGX_OK;
}


/* copies the body into one pool buffer, from memory or the temp file */
static ngx_int_t
ngx_http_cms_body_collect(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    size_t max)
{
    off_t         len;
    u_char       *p;
    ngx_chain_t  *cl;

    if (r->request_body == NULL || r->request_body->bufs == NULL) {
        return NGX_OK;
    }

    len = 0;

    for (cl = r->request_body->bufs; cl; cl = cl->next) {
        len += ngx_buf_size(cl->buf);
    }

    if (len == 0) {
        return NGX_OK;
    }

    if (len > (off_t) max) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_PAYLOAD_TOO_LARGE, NULL);
    }

    p = ngx_pnalloc(r->pool, (size_t) len + 1);

    if (p == NULL) {
        return NGX_ERROR;
    }

    ctx->raw_body.data = p;

    p = ngx_http_cms_body_copy(r, p);
    if (p == NULL) {
        return NGX_ERROR;
    }

    *p = '\0';
    ctx->raw_body.len = p - ctx->raw_body.data;

    return NGX_OK;
}


/* the body's buffers, in memory or in the temp file, copied to p; returns
   the end, or NULL once a failed read is logged */
static u_char *
ngx_http_cms_body_copy(ngx_http_request_t *r, u_char *p)
{
    ssize_t       n;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    for (cl = r->request_body->bufs; cl; cl = cl->next) {
        b = cl->buf;

        if (!b->in_file) {
            /* a chunked body ends with an empty buffer whose pos is NULL */
            if (b->last != b->pos) {
                p = ngx_cpymem(p, b->pos, b->last - b->pos);
            }

            continue;
        }

        n = ngx_read_file(b->file, p, (size_t) (b->file_last - b->file_pos),
                          b->file_pos);

        if (n != b->file_last - b->file_pos) {
            ngx_log_error(NGX_LOG_CRIT, r->connection->log, ngx_errno,
                          "cms: reading the body temp file failed");
            return NULL;
        }

        p += n;
    }

    return p;
}


/* "application/json", optionally with parameters such as charset */
static ngx_int_t
ngx_http_cms_body_is_json(ngx_http_request_t *r)
{
    u_char           *p, *last;
    ngx_table_elt_t  *h;

    h = r->headers_in.content_type;

    if (h == NULL) {
        return NGX_DECLINED;
    }

    p = h->value.data;
    last = p + h->value.len;

    if ((size_t) (last - p) < sizeof("application/json") - 1
        || ngx_strncasecmp(p, (u_char *) "application/json",
                           sizeof("application/json") - 1)
           != 0)
    {
        return NGX_DECLINED;
    }

    p += sizeof("application/json") - 1;

    while (p < last && *p == ' ') {
        p++;
    }

    return (p == last || *p == ';') ? NGX_OK : NGX_DECLINED;
}


/* why jansson refused a body, in words of our own (never its err.text) */
static const char *
ngx_http_cms_body_reason(json_error_t *err)
{
    switch (json_error_code(err)) {

    case json_error_premature_end_of_input:
        return "premature end of input";

    case json_error_end_of_input_expected:
        return "text after the value";

    case json_error_invalid_utf8:
        return "invalid UTF-8";

    case json_error_invalid_syntax:
        return "invalid syntax";

    case json_error_duplicate_key:
        return "duplicate key";

    case json_error_null_character:
    case json_error_null_byte_in_key:
        return "NUL character";

    case json_error_numeric_overflow:
        return "number out of range";

    default:
        return "invalid";
    }
}
