
/*
 * Answers: the headers every response carries, JSON bodies, error bodies,
 * and ngx_http_cms_finish(), the only caller of ngx_http_finalize_request.
 */


#ifndef _NGX_HTTP_CMS_RESPONSE_H_INCLUDED_
#define _NGX_HTTP_CMS_RESPONSE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_json.h"


/*
 * Turns a handler's return code into an answer and returns what
 * ngx_http_finalize_request() should get:
 *   NGX_DONE   asynchronous work queued; nothing is sent;
 *   NGX_OK     the handler already sent its response;
 *   >= 300     an error body from ctx->err (or the status's generic one);
 *   NGX_ERROR  a 500 internal_error body, unless a header already went.
 * Used directly by the content handler; everything else calls finish().
 */
ngx_int_t ngx_http_cms_respond(ngx_http_request_t *r, ngx_int_t rc);

/*
 * ngx_http_cms_respond() and then ngx_http_finalize_request(), once per
 * request.  A caller running from an event handler that is not the
 * request's own must call ngx_http_run_posted_requests() afterwards.
 */
void ngx_http_cms_finish(ngx_http_request_t *r, ngx_int_t rc);

/*
 * Sends "body" (JSON text in memory that outlives the request, or pool
 * memory) with "status".  Returns NGX_OK (the answer went to the output
 * filter; its own rc is kept for finalizing) or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *body);

/*
 * The same for JSON the module's own writer made (the row and list
 * writers: compact already), sent without the compaction scan.
 */
ngx_int_t ngx_http_cms_send_written(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *body);

/*
 * The same for a body that is not JSON (sent as it is) of content type
 * "type" (which lives as long as the request), e.g. an RSS feed.  Headers
 * the caller added (ETag, Cache-Control) go with it; nginx's not-modified
 * filter answers 304 for a matching If-None-Match when the caller set
 * r->headers_out.etag.
 */
ngx_int_t ngx_http_cms_send_typed(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *type, ngx_str_t *body);

/* Serialises "json" and sends it; the caller keeps its reference. */
ngx_int_t ngx_http_cms_send_json(ngx_http_request_t *r, ngx_uint_t status,
    json_t *json);

/*
 * Installs the header and body filters that turn the errors nginx answers
 * by itself in a "cms" location (a body over its cap found as it is read,
 * a timeout) into the API's JSON error shape with a request id.
 */
ngx_int_t ngx_http_cms_response_init(ngx_conf_t *cf);

/*
 * Creates the request context with a fresh request id and the path's error
 * shape.  Returns it, or NULL on allocation failure.
 */
ngx_http_cms_ctx_t *ngx_http_cms_ctx_create(ngx_http_request_t *r);

/* Adds a response header; "value" must live as long as the request. */
ngx_int_t ngx_http_cms_header_add(ngx_http_request_t *r, ngx_str_t *name,
    ngx_str_t *value);


/*
 * Sends {"<name>": <row 0, column 0>} where that column is JSON text made
 * by the statement; no row (or NULL) answers 404 not_found.  Returns the
 * handler contract's codes.
 */
ngx_int_t ngx_http_cms_send_wrapped(ngx_http_request_t *r,
    ngx_uint_t status, const char *name, PGresult *res);

/* The same with the JSON text in column "col"; with "name" NULL, the
   column's text is the whole answer. */
ngx_int_t ngx_http_cms_send_column(ngx_http_request_t *r,
    ngx_uint_t status, const char *name, PGresult *res, int col);


/*
 * Sends {"<record name>": {members}} from row 0 of "res", written from
 * the record's columns; no row answers 404 not_found.  Returns the
 * handler contract's codes.
 */
ngx_int_t ngx_http_cms_send_row(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res);


/*
 * Sends row 0 of "res" written from the record's columns, with one more
 * string member "extra" when it is not NULL (a secret shown once):
 * {"<record name>": {members}, "<key>": "<value>"}, or with the record's
 * name NULL the row's members themselves, {members, "<key>": "<value>"}.
 * No row answers 404 not_found.  Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_send_row_with(ngx_http_request_t *r,
    ngx_uint_t status, const ngx_http_cms_record_t *rec, PGresult *res,
    ngx_keyval_t *extra);

/*
 * Sends {"<record name>": {members}} from row 0 of "res" whose record
 * columns are counted from column "base" (a fused read: after the key's);
 * no row, or a NULL first record column (no record joined), answers 404
 * not_found.  Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_send_row_at(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_uint_t base);


/*
 * Continuations for the record routes: the result checked, then row 0
 * sent as the record in ctx->data (ngx_http_cms_record_t), 201 for a POST
 * and 200 otherwise, no row answering 404 (_row_done; _row_ok_done is
 * always 200, for an action such as a key's rotation); or 204 with no
 * body, no row answering 404 (_deleted_done).  They return the handler
 * contract's codes.
 *
 * ngx_http_cms_send_done(): the result checked, then 204 with no body when
 * the statement answered one row whose first column is neither NULL nor
 * false ("f"), else "err" recorded (with "param", may be NULL).
 * _deleted_done is it with 404 not_found.
 */
ngx_int_t ngx_http_cms_row_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
ngx_int_t ngx_http_cms_row_ok_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
ngx_int_t ngx_http_cms_deleted_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
ngx_int_t ngx_http_cms_send_done(ngx_http_request_t *r, PGresult *res,
    ngx_uint_t err, const char *param);

/*
 * The arguments of a record's statement: args[0] the principal's
 * workspace, args[1] the path's first parameter, a uuid.  NGX_OK, or 404
 * not_found recorded for anything else (a malformed id is simply not
 * found).
 */
ngx_int_t ngx_http_cms_path_id(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);


#endif /* _NGX_HTTP_CMS_RESPONSE_H_INCLUDED_ */
