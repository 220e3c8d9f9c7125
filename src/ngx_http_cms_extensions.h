
/*
 * Private to the extensions resource (ngx_http_cms_extensions*.c): what
 * the management routes, the install flow and the UI token share.  The
 * resource's one export, its route table, is declared in
 * ngx_http_cms_resources.h.
 */


#ifndef _NGX_HTTP_CMS_EXTENSIONS_H_INCLUDED_
#define _NGX_HTTP_CMS_EXTENSIONS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_module.h"


/* configuration values checked against a manifest's fields */
typedef struct {
    json_t                     *fields;      /* the manifest's "config" */
    json_t                     *config;      /* the values given, or NULL */
    ngx_str_t                  *ext_id;      /* secrets are sealed to it */
    ngx_uint_t                  install;     /* else an update */
    ngx_str_t                   rows;        /* out */
    ngx_str_t                   secrets;     /* out, updates only */
} ngx_http_cms_extensions_values_t;


/*
 * POST /extensions: reads or fetches the manifest named by
 * "manifest_url", then installs it.  Handler contract codes: NGX_DONE
 * while the manifest is read (thread pool) or fetched (subrequest), whose
 * continuation finishes the request; never finalizes it itself.
 */
ngx_int_t ngx_http_cms_extensions_install(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * Checks vals->config against vals->fields into vals->rows, a JSON array
 * of {name, value} or {name, cipher} (secrets sealed to ext_id and the
 * field name), and, on an update, vals->secrets, the names of the secret
 * fields given, space-separated.  Both live in r->pool.  NGX_OK; 422 with
 * the field named; NGX_ERROR.  Never finalizes the request.
 */
ngx_int_t ngx_http_cms_extensions_values(ngx_http_request_t *r,
    ngx_http_cms_extensions_values_t *vals);

/*
 * GET /extensions/:name/ui-token, for a user session.  Handler contract
 * codes: NGX_DONE while the extension is looked up; never finalizes.
 */
ngx_int_t ngx_http_cms_extensions_ui_token(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * Answers res's first row as the members of "rec" (a record without a
 * name: written flat) with "api_key": the new key's secret added (it is
 * shown this once).  Returns the handler contract's codes; never finalizes
 * the request.
 */
ngx_int_t ngx_http_cms_extensions_send_key(ngx_http_request_t *r,
    ngx_uint_t status, const ngx_http_cms_record_t *rec, PGresult *res,
    ngx_str_t *secret);

/* ctx->params[0] checked as an extension name: NGX_OK, else 404 */
ngx_int_t ngx_http_cms_extensions_name(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/* 422 validation_error naming param, with message; never finalizes */
ngx_int_t ngx_http_cms_extensions_invalid(ngx_http_request_t *r,
    const char *param, const char *message);


#endif /* _NGX_HTTP_CMS_EXTENSIONS_H_INCLUDED_ */
