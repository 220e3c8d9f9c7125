
/*
 * CPU-heavy work (password hashing, HTML sanitizing) in nginx's thread
 * pool, so the event loop never spends it.
 */


#ifndef _NGX_HTTP_CMS_THREAD_H_INCLUDED_
#define _NGX_HTTP_CMS_THREAD_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/* runs in a pool thread: no nginx calls, no logging, no pool allocation */
typedef void (*ngx_http_cms_thread_work_pt)(void *data);

/* back on the event loop; returns the handler contract's codes */
typedef ngx_int_t (*ngx_http_cms_thread_done_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);


/*
 * Runs work(data) in the thread pool, then done(r, ctx, data) on the event
 * loop, then finishes the request with what done() returned.  "data" must
 * live in r->pool.  The request is held (r->main->blocked) while the work
 * runs, so a client that leaves cannot free what the thread writes.
 * Returns NGX_DONE or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_thread_run(ngx_http_request_t *r,
    ngx_http_cms_thread_work_pt work, void *data,
    ngx_http_cms_thread_done_pt done);


#endif /* _NGX_HTTP_CMS_THREAD_H_INCLUDED_ */
