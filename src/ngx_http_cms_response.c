
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
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_public_cache.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_response_cache.h"
#include "cms_json_scan.h"
#include "cms_uuid.h"
#include "cms_trace.h"
#include "ngx_http_cms_crypto.h"


/* methods that write nothing (the public cache's touch) */
#define NGX_HTTP_CMS_READS  (NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_OPTIONS)


/* what an error body echoes back of a client's text, at most */
#define NGX_HTTP_CMS_ERROR_MESSAGE_MAX  200
#define NGX_HTTP_CMS_ERROR_PARAM_MAX    64


static ngx_int_t ngx_http_cms_send_headers(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status, ngx_str_t *body);
static ngx_int_t ngx_http_cms_send_compact(ngx_http_request_t *r,
    ngx_str_t **body);
static ngx_uint_t ngx_http_cms_request_id_valid(ngx_str_t *v);
static ngx_int_t ngx_http_cms_trace_echo(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_uint_t ngx_http_cms_request_id_kept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_error_body(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t *status, ngx_str_t *body);
static ngx_int_t ngx_http_cms_error_cut(ngx_pool_t *pool, ngx_str_t *s,
    size_t max);
static ngx_int_t ngx_http_cms_send_error(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_int_t rc);
static ngx_int_t ngx_http_cms_set_status(ngx_http_request_t *r,
    ngx_uint_t status);
static ngx_int_t ngx_http_cms_send_hold(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status, ngx_str_t *type,
    ngx_str_t *body);
static ngx_int_t ngx_http_cms_send_held(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* an answer held until its write's position is kept (replicas) */
typedef struct {
    ngx_uint_t                  status;
    ngx_str_t                   type;
    ngx_str_t                   body;
} ngx_http_cms_held_t;


static ngx_int_t ngx_http_cms_error_headers(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status);
static ngx_uint_t ngx_http_cms_response_shape(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_header_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);


static ngx_http_output_header_filter_pt  ngx_http_cms_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_cms_next_body_filter;


static ngx_str_t  ngx_http_cms_request_id_name = ngx_string("X-Request-Id");
static ngx_str_t  ngx_http_cms_traceparent_name = ngx_string("traceparent");
static ngx_str_t  ngx_http_cms_json_type = ngx_string("application/json");
static ngx_str_t  ngx_http_cms_cache_control_name =
    ngx_string("Cache-Control");

static ngx_str_t  ngx_http_cms_no_store = ngx_string("no-store");


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

    if (r->connection->error || rc == NGX_HTTP_CLIENT_CLOSED_REQUEST) {
        /* the client left while we waited: nginx's 499, nothing to send */
        return NGX_HTTP_CLIENT_CLOSED_REQUEST;
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


/* long: the status, its log line, then the body */
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

    /* the cause is logged where it happened; this ties it to the id (an
       old schema is logged once per worker, not per request) */
    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR
        && !(ctx->has_err
             && ctx->err.code == NGX_HTTP_CMS_ERR_SCHEMA_OUT_OF_DATE))
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: answering %ui to request \"%*s\"", status,
                      ctx->request_id_len, ctx->request_id);

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

    if (ngx_http_cms_error_headers(r, ctx, status) != NGX_OK) {
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
    /* every JSON answer is compact, whatever wrote it */
    if (ngx_http_cms_send_compact(r, &body) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_typed(r, status, &ngx_http_cms_json_type, body);
}


ngx_int_t
ngx_http_cms_send_written(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *body)
{
    return ngx_http_cms_send_typed(r, status, &ngx_http_cms_json_type, body);
}


/*
 * A write's answer, with replicas, waits until its position is kept
 * (ngx_http_cms_pg_mark()): a copy (its body may live in a result the
 * pool clears) is kept meanwhile: NGX_DONE, sent later by
 * ngx_http_cms_send_held(); NGX_DECLINED: send it now; NGX_ERROR.
 */
static ngx_int_t
ngx_http_cms_send_hold(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t status, ngx_str_t *type, ngx_str_t *body)
{
    ngx_int_t             rc;
    ngx_http_cms_held_t  *held;

    if (ctx == NULL || !ctx->pg_wrote || ctx->pg_marked
        || status >= NGX_HTTP_SPECIAL_RESPONSE)
    {
        return NGX_DECLINED;
    }

    held = ngx_palloc(r->pool, sizeof(ngx_http_cms_held_t));
    if (held == NULL) {
        return NGX_ERROR;
    }

    held->status = status;
    held->type = *type;
    held->body.len = body->len;
    held->body.data = ngx_pnalloc(r->pool, body->len ? body->len : 1);

    if (held->body.data == NULL) {
        return NGX_ERROR;
    }

    if (body->len) {
        /* an empty body (a 204) may have no data at all */
        ngx_memcpy(held->body.data, body->data, body->len);
    }

    ctx->held = held;

    rc = ngx_http_cms_pg_mark(r, ngx_http_cms_send_held);

    if (rc != NGX_DONE) {
        ctx->held = NULL;
    }

    return rc;
}


static ngx_int_t
ngx_http_cms_send_held(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_held_t  *held;

    held = ctx->held;
    ctx->held = NULL;

    return ngx_http_cms_send_typed(r, held->status, &held->type,
                                   &held->body);
}


/* long: status, request id, type, length, then the chain */
ngx_int_t
ngx_http_cms_send_typed(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *type, ngx_str_t *body)
{
    ngx_int_t            rc;
    ngx_buf_t           *b;
    ngx_chain_t          out;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    rc = ngx_http_cms_send_hold(r, ctx, status, type, body);
    if (rc != NGX_DECLINED) {
        return rc;
    }

    if (ctx != NULL && ctx->record != NULL) {
        /* the first answer under an Idempotency-Key is kept for retries */
        ctx->record(r, ctx, status, body);
    }

    if (ngx_http_cms_send_headers(r, ctx, status, body) != NGX_OK) {
        return NGX_ERROR;
    }

    /* a write done: the public cache checks its sites again */
    if (status < NGX_HTTP_SPECIAL_RESPONSE
        && !(r->method & NGX_HTTP_CMS_READS))
    {
        ngx_http_cms_public_cache_touch(r);
    }

    if (ctx != NULL && ctx->cacheable && status == NGX_HTTP_OK
        && ngx_http_cms_cache_headers(r, ctx, body) != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->headers_out.content_type = *type;
    r->headers_out.content_type_len = type->len;

    if (body->len == 0 || r->method == NGX_HTTP_HEAD) {
        r->header_only = 1;
    }

    /* our own answer: the error filter below leaves it alone */
    if (ctx != NULL) {
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


/*
 * The status and the headers every answer carries.  A body the pipeline
 * did not read (an answer before its body step: 401, 403, 404, ...) is
 * discarded: nginx drops it after the answer, so that the connection can
 * be reused; when that fails, the connection closes after the answer.
 */
static ngx_int_t
ngx_http_cms_send_headers(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t status, ngx_str_t *body)
{
    ngx_str_t  id;

    if (r->request_body == NULL
        && ngx_http_discard_request_body(r) != NGX_OK)
    {
        r->keepalive = 0;
    }

    if (ngx_http_cms_set_status(r, status) != NGX_OK) {
        return NGX_ERROR;
    }

    id.data = ctx ? ctx->request_id : NULL;
    id.len = ctx ? ctx->request_id_len : 0;

    if (id.len
        && ngx_http_cms_header_add(r, &ngx_http_cms_request_id_name, &id)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx != NULL && ctx->no_store
        && ngx_http_cms_header_add(r, &ngx_http_cms_cache_control_name,
                                   &ngx_http_cms_no_store)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx != NULL && ctx->cors.len
        && ngx_http_cms_cache_cors(r, &ctx->cors) != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->headers_out.content_type = ngx_http_cms_json_type;
    r->headers_out.content_type_len = ngx_http_cms_json_type.len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.content_length_n = body->len;

    return NGX_OK;
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


/*
 * What an error's status asks for besides the body: a 503 says when to
 * come back (the pool's queue drains within a second); a 401 names the
 * scheme, Bearer (RFC 6750), with error="invalid_token" when a credential
 * came and was refused, none when none came (3.1)
 */
static ngx_int_t
ngx_http_cms_error_headers(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t status)
{
    ngx_uint_t  code;

    static ngx_str_t  retry_name = ngx_string("Retry-After");
    static ngx_str_t  retry = ngx_string("1");
    static ngx_str_t  auth_name = ngx_string("WWW-Authenticate");
    static ngx_str_t  bearer = ngx_string("Bearer");
    static ngx_str_t  refused = ngx_string("Bearer error=\"invalid_token\"");

    if (status == NGX_HTTP_SERVICE_UNAVAILABLE) {
        return ngx_http_cms_header_add(r, &retry_name, &retry);
    }

    /* a challenge another module set (auth_basic in front of us) stands */
    if (status != NGX_HTTP_UNAUTHORIZED
        || r->headers_out.www_authenticate != NULL)
    {
        return NGX_OK;
    }

    code = ctx->has_err ? ctx->err.code : NGX_HTTP_CMS_ERR_NONE;

    return ngx_http_cms_header_add(r, &auth_name,
                                   (code == NGX_HTTP_CMS_ERR_INVALID_TOKEN
                                    || code == NGX_HTTP_CMS_ERR_INVALID_API_KEY)
                                   ? &refused : &bearer);
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
        return ngx_http_cms_error_shape(&r->uri);
    }

    end = (r->uri_end > r->uri_start && r->uri_end <= b->end) ? r->uri_end
                                                             : b->end;
    raw.data = r->uri_start;
    raw.len = end - r->uri_start;

    return ngx_http_cms_error_shape(&raw);
}


/*
 * An inbound X-Request-Id the module keeps: 8 to 64 bytes of letters,
 * digits, '-', '_', '.' and ':' (a UUID, a ULID, a proxy's hex id);
 * anything else is replaced by one of the module's, so that nothing a
 * client sends reaches a log line or a header unchecked
 */
static ngx_uint_t
ngx_http_cms_request_id_valid(ngx_str_t *v)
{
    u_char  *p, *last;

    if (v->len < 8 || v->len > NGX_HTTP_CMS_REQUEST_ID_MAX) {
        return 0;
    }

    for (p = v->data, last = p + v->len; p < last; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')
              || (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == '_'
              || *p == '.' || *p == ':'))
        {
            return 0;
        }
    }

    return 1;
}


ngx_http_cms_ctx_t *
ngx_http_cms_ctx_create(ngx_http_request_t *r)
{
    u_char               id[NGX_HTTP_CMS_REQUEST_ID_LEN / 2];
    ngx_table_elt_t     *h;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }

    /* a client's (or a proxy's) id is kept when it is a plain token */
    h = ngx_http_cms_query_find(&r->headers_in.headers,
                                &ngx_http_cms_request_id_name, NULL);

    if (h != NULL && ngx_http_cms_request_id_valid(&h->value)) {
        ngx_memcpy(ctx->request_id, h->value.data, h->value.len);
        ctx->request_id_len = h->value.len;

    } else {
        if (ngx_http_cms_crypto_random_id(id, sizeof(id)) != NGX_OK) {
            return NULL;
        }

        ngx_hex_dump(ctx->request_id, id, sizeof(id));
        ctx->request_id_len = NGX_HTTP_CMS_REQUEST_ID_LEN;
    }

    /* a W3C traceparent is honoured when valid: echoed, and logged as
       $cms_trace_id; anything else is ignored (docs/operations.md) */
    h = ngx_http_cms_query_find(&r->headers_in.headers,
                                &ngx_http_cms_traceparent_name, NULL);

    if (h != NULL && cms_traceparent_valid(h->value.data, h->value.len)) {
        ctx->traceparent.data = h->value.data;
        ctx->traceparent.len = CMS_TRACEPARENT_LEN;
    }

    ctx->shape = ngx_http_cms_response_shape(r);
    ctx->finish = ngx_http_cms_finish;

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
/* long: which of nginx's own answers become JSON */
static ngx_int_t
ngx_http_cms_header_filter(ngx_http_request_t *r)
{
    ngx_str_t                 id;
    ngx_uint_t                status;
    ngx_http_cms_ctx_t       *ctx;
    ngx_http_cms_loc_conf_t  *lcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_cms_module);
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx != NULL && ngx_http_cms_trace_echo(r, ctx) != NGX_OK) {
        return NGX_ERROR;
    }

    if ((!lcf->enable && lcf->error_pages != 1) || r != r->main
        || r->headers_out.status < NGX_HTTP_BAD_REQUEST
        || (ctx != NULL && ctx->answering))
    {
        return ngx_http_cms_next_header_filter(r);
    }

    if (ctx == NULL) {
        ctx = ngx_http_cms_ctx_create(r);
        if (ctx == NULL || ngx_http_cms_trace_echo(r, ctx) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    /* a read of the bucket it refused is the storage's failure */
    status = ngx_http_cms_s3_status(r, r->headers_out.status);

    if (status != r->headers_out.status) {
        r->headers_out.status = status;
        r->headers_out.status_line.len = 0;    /* the bucket's */
    }

    if (ngx_http_cms_error_body(r, ctx, &status, &ctx->replacement)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    id.data = ctx->request_id;
    id.len = ctx->request_id_len;

    /* a request that jumped to a location of its own (a read of the
       bucket) kept the id it had before, in its header: the same one */
    if (!ngx_http_cms_request_id_kept(r, ctx)
        && ngx_http_cms_header_add(r, &ngx_http_cms_request_id_name, &id)
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

    if (ngx_http_cms_error_headers(r, ctx, status) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->replace = 1;

    return ngx_http_cms_next_header_filter(r);
}


/* the main request's answer carries a valid inbound traceparent back */
static ngx_int_t
ngx_http_cms_trace_echo(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (ctx->traceparent.len == 0 || ctx->traced || r != r->main) {
        return NGX_OK;
    }

    ctx->traced = 1;

    return ngx_http_cms_header_add(r, &ngx_http_cms_traceparent_name,
                                   &ctx->traceparent);
}


/* an X-Request-Id already in the answer's headers becomes ctx's id */
static ngx_uint_t
ngx_http_cms_request_id_kept(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_table_elt_t  *h;

    h = ngx_http_cms_query_find(&r->headers_out.headers,
                                &ngx_http_cms_request_id_name, NULL);

    if (h == NULL || h->value.len == 0
        || h->value.len > NGX_HTTP_CMS_REQUEST_ID_MAX)
    {
        return 0;
    }

    ngx_memcpy(ctx->request_id, h->value.data, h->value.len);
    ctx->request_id_len = h->value.len;

    return 1;
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


ngx_int_t
ngx_http_cms_send_wrapped(ngx_http_request_t *r, ngx_uint_t status,
    const char *name, PGresult *res)
{
    return ngx_http_cms_send_column(r, status, name, res, 0);
}


ngx_int_t
ngx_http_cms_send_column(ngx_http_request_t *r, ngx_uint_t status,
    const char *name, PGresult *res, int col)
{
    u_char     *p;
    size_t      len;
    ngx_str_t   body;

    if (PQntuples(res) == 0 || PQnfields(res) <= col
        || PQgetisnull(res, 0, col))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    len = PQgetlength(res, 0, col);

    body.data = ngx_pnalloc(r->pool, len + (name ? ngx_strlen(name) : 0) + 8);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = body.data;

    if (name != NULL) {
        p = ngx_sprintf(p, "{\"%s\":", name);
    }

    /* PostgreSQL writes {"a" : 1}: every answer is compact */
    p += cms_json_compact((u_char *) PQgetvalue(res, 0, col), len, p);

    if (name != NULL) {
        *p++ = '}';
    }

    body.len = p - body.data;

    return ngx_http_cms_send_written(r, status, &body);
}


/* the error body for the request's shape, into a pool string */
/* long: the spec's two error shapes side by side */
static ngx_int_t
ngx_http_cms_error_body(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t *status, ngx_str_t *body)
{
    json_t                      *root, *inner, *param;
    ngx_int_t                    rc;
    ngx_str_t                    msg, pm;
    ngx_uint_t                   code;
    const ngx_http_cms_error_t  *e;

    code = ctx->has_err ? ctx->err.code
                        : ngx_http_cms_error_for_status(*status);
    e = ngx_http_cms_error_get(code);

    *status = e->status;

    if (ctx->has_err && ctx->err.message) {
        msg.data = (u_char *) ctx->err.message;
        msg.len = ngx_strlen(ctx->err.message);

    } else {
        msg = e->message;
    }

    pm = ctx->has_err ? ctx->err.param : (ngx_str_t) ngx_null_string;

    /* echoes are bounded: a client's 100 KB field name is not sent back */
    if (ngx_http_cms_error_cut(r->pool, &msg, NGX_HTTP_CMS_ERROR_MESSAGE_MAX)
        != NGX_OK
        || ngx_http_cms_error_cut(r->pool, &pm, NGX_HTTP_CMS_ERROR_PARAM_MAX)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx->shape == NGX_HTTP_CMS_SHAPE_EXT) {
        param = pm.len ? json_stringn((char *) pm.data, pm.len) : json_null();

        inner = json_pack("{s:s%, s:s%, s:o}",
                          "type", e->type.data, e->type.len,
                          "message", msg.data, msg.len, "param", param);
        root = inner ? json_pack("{s:o}", "error", inner) : NULL;

    } else {
        root = json_pack("{s:s%, s:s%}", "error", msg.data, msg.len,
                         "code", e->code.data, e->code.len);
    }

    if (root == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_json_dump(r, root, body);
    json_decref(root);

    return rc;
}


/*
 * Cuts "s" to at most "max" bytes, ending in "..." when cut, at a UTF-8
 * character boundary, and with control characters (which JSON escapes
 * six bytes each) replaced by "?", so the escaped text stays near "max".
 */
static ngx_int_t
ngx_http_cms_error_cut(ngx_pool_t *pool, ngx_str_t *s, size_t max)
{
    u_char  *p;
    size_t   i, len;

    len = s->len;

    if (len > max) {
        len = max - 3;

        while (len > 0 && (s->data[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    for (i = 0; i < len && s->data[i] >= 0x20 && s->data[i] != 0x7f; i++) {
        /* void */
    }

    if (len == s->len && i == len) {
        return NGX_OK;
    }

    p = ngx_pnalloc(pool, len + 3);
    if (p == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < len; i++) {
        p[i] = (s->data[i] < 0x20 || s->data[i] == 0x7f) ? '?' : s->data[i];
    }

    if (len < s->len) {
        p[len++] = '.'; p[len++] = '.'; p[len++] = '.';
    }

    s->data = p;
    s->len = len;

    return NGX_OK;
}


/*
 * What PostgreSQL's json functions wrote ({"a" : 1}) loses its spaces,
 * into a copy (the body may be read-only); compact text is left as it is.
 */
static ngx_int_t
ngx_http_cms_send_compact(ngx_http_request_t *r, ngx_str_t **body)
{
    ngx_str_t  *compact;

    if (!cms_json_loose((*body)->data, (*body)->len)) {
        return NGX_OK;
    }

    compact = ngx_palloc(r->pool, sizeof(ngx_str_t));
    if (compact == NULL) {
        return NGX_ERROR;
    }

    compact->data = ngx_pnalloc(r->pool, (*body)->len);
    if (compact->data == NULL) {
        return NGX_ERROR;
    }

    compact->len = cms_json_compact((*body)->data, (*body)->len,
                                    compact->data);
    *body = compact;

    return NGX_OK;
}
