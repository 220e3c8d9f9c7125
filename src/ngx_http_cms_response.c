
/*
 * Answers and finalization.  Every response carries X-Request-Id; JSON
 * bodies carry an exact Content-Length.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_router.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_idempotency.h"


static ngx_int_t ngx_http_cms_send_error(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_int_t rc);
static ngx_int_t ngx_http_cms_set_status(ngx_http_request_t *r,
    ngx_uint_t status);


static ngx_int_t ngx_http_cms_retry_after(ngx_http_request_t *r,
    ngx_uint_t status);
static ngx_uint_t ngx_http_cms_response_shape(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_header_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);


static ngx_http_output_header_filter_pt  ngx_http_cms_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_cms_next_body_filter;


static ngx_str_t  ngx_http_cms_request_id_name = ngx_string("X-Request-Id");
static ngx_str_t  ngx_http_cms_json_type = ngx_string("application/json");


ngx_int_t
ngx_http_cms_respond(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (rc == NGX_DONE) {
        return NGX_DONE;
    }

    if (ctx == NULL) {
        return rc == NGX_OK ? NGX_OK : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->sent) {
        /* the answer went out: only the output filter's result matters */
        return rc == NGX_ERROR ? NGX_ERROR : ctx->out_rc;
    }

    if (rc == NGX_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: handler returned NGX_OK without an answer");
        rc = NGX_ERROR;
    }

    return ngx_http_cms_send_error(r, ctx, rc);
}


void
ngx_http_cms_finish(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_http_cms_ctx_t  *ctx;

    rc = ngx_http_cms_respond(r, rc);

    if (rc == NGX_DONE) {
        return;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx != NULL) {
        if (ctx->finalized) {
            ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                          "cms: request finalized twice");
            return;
        }

        ctx->finalized = 1;
    }

    ngx_http_finalize_request(r, rc);
}


static ngx_int_t
ngx_http_cms_send_error(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_int_t rc)
{
    ngx_str_t   body;
    ngx_uint_t  status;

    if ((rc == NGX_ERROR || rc < NGX_HTTP_SPECIAL_RESPONSE)
        && (!ctx->has_err
            || ngx_http_cms_error_get(ctx->err.code)->status < 500))
    {
        /* an internal failure: a 4xx recorded earlier does not describe it */
        (void) ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INTERNAL, NULL);
    }

    status = ctx->has_err ? ngx_http_cms_error_get(ctx->err.code)->status
                          : (ngx_uint_t) rc;

    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR) {
        /* the cause is logged where it happened; this ties it to the id */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: answering %ui to request \"%*s\"", status,
                      (size_t) NGX_HTTP_CMS_REQUEST_ID_LEN, ctx->request_id);

    } else {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: answering %ui", status);
    }

    if (r->header_sent) {
        return NGX_ERROR;
    }

    if (ngx_http_cms_error_body(r, ctx, &status, &body) != NGX_OK) {
        return NGX_ERROR;
    }

    /* an error body replaces anything a handler prepared */
    r->headers_out.content_length_n = -1;

    if (ngx_http_cms_retry_after(r, status) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_cms_send(r, status, &body) != NGX_OK) {
        return NGX_ERROR;
    }

    return ctx->out_rc;
}


ngx_int_t
ngx_http_cms_send(ngx_http_request_t *r, ngx_uint_t status, ngx_str_t *body)
{
    ngx_int_t            rc;
    ngx_buf_t           *b;
    ngx_str_t            id;
    ngx_chain_t          out;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx != NULL && ctx->idem != NULL) {
        /* the first answer under an Idempotency-Key is kept for retries */
        ngx_http_cms_idempotency_record(r, ctx, status, body);
    }

    if (ngx_http_cms_set_status(r, status) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ctx != NULL) {
        id.data = ctx->request_id;
        id.len = NGX_HTTP_CMS_REQUEST_ID_LEN;

        if (ngx_http_cms_header_add(r, &ngx_http_cms_request_id_name, &id)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    r->headers_out.content_type = ngx_http_cms_json_type;
    r->headers_out.content_type_len = ngx_http_cms_json_type.len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.content_length_n = body->len;

    if (body->len == 0 || r->method == NGX_HTTP_HEAD) {
        r->header_only = 1;
    }

    if (ctx != NULL) {
        /* our own answer: the error filter below leaves it alone */
        ctx->answering = 1;
    }

    rc = ngx_http_send_header(r);

    if (ctx != NULL) {
        ctx->sent = 1;
        ctx->out_rc = rc;
    }

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc == NGX_ERROR ? NGX_ERROR : NGX_OK;
    }

    b = ngx_calloc_buf(r->pool);

    if (b == NULL) {
        return NGX_ERROR;
    }

    b->pos = body->data;
    b->last = body->data + body->len;
    b->memory = 1;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    rc = ngx_http_output_filter(r, &out);

    if (ctx != NULL) {
        ctx->out_rc = rc;
    }

    return rc == NGX_ERROR ? NGX_ERROR : NGX_OK;
}


ngx_int_t
ngx_http_cms_send_json(ngx_http_request_t *r, ngx_uint_t status,
    json_t *json)
{
    ngx_str_t  body;

    if (ngx_http_cms_json_dump(r, json, &body) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, status, &body);
}


ngx_int_t
ngx_http_cms_header_add(ngx_http_request_t *r, ngx_str_t *name,
    ngx_str_t *value)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);

    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    h->key = *name;
    h->value = *value;
    h->lowcase_key = NULL;

#if (nginx_version >= 1023000)
    h->next = NULL;
#endif

    return NGX_OK;
}


/* a 503 says when to come back: the pool's queue drains within a second */
static ngx_int_t
ngx_http_cms_retry_after(ngx_http_request_t *r, ngx_uint_t status)
{
    static ngx_str_t  name = ngx_string("Retry-After");
    static ngx_str_t  value = ngx_string("1");

    if (status != NGX_HTTP_SERVICE_UNAVAILABLE) {
        return NGX_OK;
    }

    return ngx_http_cms_header_add(r, &name, &value);
}


/* 422 has no reason phrase in nginx 1.22: give it a status line */
static ngx_int_t
ngx_http_cms_set_status(ngx_http_request_t *r, ngx_uint_t status)
{
    r->headers_out.status = status;

    if (status == NGX_HTTP_CMS_UNPROCESSABLE) {
        ngx_str_set(&r->headers_out.status_line, "422 Unprocessable Entity");
    }

    return NGX_OK;
}


/*
 * The error shape for the request's path.  A request nginx refused while
 * reading its request line (414, a bad escape) has no r->uri yet: its raw
 * URI, still in the header buffer, tells /v1/ext... from the rest.
 */
static ngx_uint_t
ngx_http_cms_response_shape(ngx_http_request_t *r)
{
    u_char     *end;
    ngx_str_t   raw;
    ngx_buf_t  *b;

    b = r->header_in;

    if (r->uri.len || r->uri_start == NULL || b == NULL
        || r->uri_start < b->start || r->uri_start >= b->end)
    {
        return ngx_http_cms_router_shape(&r->uri);
    }

    end = (r->uri_end > r->uri_start && r->uri_end <= b->end) ? r->uri_end
                                                             : b->end;
    raw.data = r->uri_start;
    raw.len = end - r->uri_start;

    return ngx_http_cms_router_shape(&raw);
}


ngx_http_cms_ctx_t *
ngx_http_cms_ctx_create(ngx_http_request_t *r)
{
    ngx_http_cms_ctx_t  *ctx;
    u_char               id[NGX_HTTP_CMS_REQUEST_ID_LEN / 2];

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }

    if (ngx_http_cms_crypto_random(id, sizeof(id)) != NGX_OK) {
        return NULL;
    }

    ngx_hex_dump(ctx->request_id, id, sizeof(id));
    ctx->shape = ngx_http_cms_response_shape(r);

    ngx_http_set_ctx(r, ctx, ngx_http_cms_module);

    return ctx;
}


ngx_int_t
ngx_http_cms_response_init(ngx_conf_t *cf)
{
    ngx_http_cms_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_cms_header_filter;

    ngx_http_cms_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_cms_body_filter;

    return NGX_OK;
}


/* an error nginx answers by itself in our location becomes ours */
static ngx_int_t
ngx_http_cms_header_filter(ngx_http_request_t *r)
{
    ngx_str_t                 id;
    ngx_uint_t                status;
    ngx_http_cms_ctx_t       *ctx;
    ngx_http_cms_loc_conf_t  *lcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_cms_module);
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if ((!lcf->enable && lcf->error_pages != 1) || r != r->main
        || r->headers_out.status < NGX_HTTP_BAD_REQUEST
        || (ctx != NULL && ctx->answering))
    {
        return ngx_http_cms_next_header_filter(r);
    }

    if (ctx == NULL) {
        ctx = ngx_http_cms_ctx_create(r);
        if (ctx == NULL) {
            return NGX_ERROR;
        }
    }

    status = r->headers_out.status;

    if (ngx_http_cms_error_body(r, ctx, &status, &ctx->replacement)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    id.data = ctx->request_id;
    id.len = NGX_HTTP_CMS_REQUEST_ID_LEN;

    if (ngx_http_cms_header_add(r, &ngx_http_cms_request_id_name, &id)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->headers_out.content_type = ngx_http_cms_json_type;
    r->headers_out.content_type_len = ngx_http_cms_json_type.len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.charset.len = 0;
    ngx_http_clear_content_length(r);
    r->headers_out.content_length_n = ctx->replacement.len;

    if (ngx_http_cms_retry_after(r, status) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->replace = 1;

    return ngx_http_cms_next_header_filter(r);
}


static ngx_int_t
ngx_http_cms_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_buf_t           *b;
    ngx_chain_t         *cl, out;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL || !ctx->replace) {
        return ngx_http_cms_next_body_filter(r, in);
    }

    /* nginx's HTML page is consumed and dropped */
    for (cl = in; cl; cl = cl->next) {
        cl->buf->pos = cl->buf->last;
        cl->buf->file_pos = cl->buf->file_last;
    }

    if (ctx->replaced) {
        return NGX_OK;
    }

    ctx->replaced = 1;

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->pos = ctx->replacement.data;
    b->last = ctx->replacement.data + ctx->replacement.len;
    b->memory = 1;
    b->last_buf = 1;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_cms_next_body_filter(r, &out);
}
