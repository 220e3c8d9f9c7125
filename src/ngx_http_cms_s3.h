
/*
 * Objects in an S3-compatible bucket (docs/object-storage.md), the store's
 * other backend: "cms_storage s3 endpoint=... bucket=... region=...
 * credentials=FILE stage=DIR".  Every exchange with the bucket goes
 * through nginx's upstream machinery, in the request that needs it,
 * signed here (SigV4, src/lib/cms_sigv4.h):
 *
 *   reads     GET/HEAD /v1/files/<key> jump to the named location
 *             "@cms_s3" (ngx_http_named_location()), which proxies the
 *             signed request and streams the bucket's answer (Range, 304,
 *             206 and 416 are the bucket's) with proxy_cache if set;
 *   writes    a subrequest to the internal location "/_cms_s3": a PUT
 *             whose body is the staged file (written, hashed and sniffed
 *             under stage= as for the folder), x-amz-content-sha256 its
 *             SHA-256, so the bucket checks every byte;
 *   deletes   the same subrequest, a DELETE.
 *
 * The request's values reach those locations as variables the module
 * sets on the request that evaluates them, before it runs: $cms_s3_url,
 * $cms_s3_uri (path and query), $cms_s3_host, $cms_s3_method,
 * $cms_s3_authorization, $cms_s3_date, $cms_s3_content_sha256,
 * $cms_s3_content_type, $cms_s3_token.
 */


#ifndef _NGX_HTTP_CMS_S3_H_INCLUDED_
#define _NGX_HTTP_CMS_S3_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/* an exchange's end, on the event loop: status is the bucket's HTTP
   status, 0 when no answer came; the request's outcome is returned */
typedef ngx_int_t (*ngx_http_cms_s3_done_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status);


/*
 * "cms_storage s3 endpoint=URL bucket=NAME region=R credentials=FILE
 * stage=DIR [path_style=on] [prefix=P] [base_url=URL]": cf->args from
 * value[1] == "s3".  Sets mcf->s3, mcf->storage (the stage folder) and
 * mcf->files_base.
 */
char *ngx_http_cms_s3_conf(ngx_conf_t *cf, ngx_http_cms_main_conf_t *mcf);

/* the variables above; preconfiguration */
ngx_int_t ngx_http_cms_s3_add_variables(ngx_conf_t *cf);

/*
 * GET or HEAD of "key" (checked by the caller) from the bucket, answered
 * with Content-Type "type", Cache-Control "cache" and Content-Disposition
 * "disposition" (none when empty).  Through "@cms_s3": NGX_DONE, the
 * request goes on there (the pipeline's reference handed over).  With
 * reads=redirect: NGX_OK and *location the presigned URL to redirect to.
 * NGX_ERROR before anything happened.
 */
ngx_int_t ngx_http_cms_s3_read(ngx_http_request_t *r, ngx_str_t *key,
    const char *type, ngx_str_t *cache, ngx_str_t *disposition,
    ngx_str_t *location);

/*
 * The status a read of the bucket answers with, for an error the bucket
 * gave (status >= 400): 404 and 416 as they are, any other 503 (logged):
 * the storage refused or failed, not the client.  Other requests' status
 * is returned as it is.
 */
ngx_uint_t ngx_http_cms_s3_status(ngx_http_request_t *r, ngx_uint_t status);

/*
 * PUT of the staged file "path" (size bytes, SHA-256 "sha256" in hex) at
 * "key", or (path NULL) DELETE of "key"; done() once the bucket answered.
 * NGX_DONE, or NGX_ERROR when nothing was sent.
 */
ngx_int_t ngx_http_cms_s3_send(ngx_http_request_t *r, ngx_str_t *key,
    u_char *path, off_t size, u_char *sha256, ngx_http_cms_s3_done_pt done,
    void *data);


/*
 * PUT of "body" (in memory, SHA-256 "sha256" in hex) at "key"; with body
 * NULL, ngx_http_cms_s3_head(): HEAD of "key" (status 200 or 404).
 * done() once the bucket answered.  NGX_DONE, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_s3_put_bytes(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *body, u_char *sha256, ngx_http_cms_s3_done_pt done,
    void *data);
ngx_int_t ngx_http_cms_s3_head(ngx_http_request_t *r, ngx_str_t *key,
    ngx_http_cms_s3_done_pt done, void *data);


#endif /* _NGX_HTTP_CMS_S3_H_INCLUDED_ */
