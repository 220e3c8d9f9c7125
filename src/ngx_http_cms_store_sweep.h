
/*
 * The store sweeper's shared parts (ngx_http_cms_store_sweep.c: queued
 * removals; ngx_http_cms_store_orphans.c: orphans found).
 */


#ifndef _NGX_HTTP_CMS_STORE_SWEEP_H_INCLUDED_
#define _NGX_HTTP_CMS_STORE_SWEEP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_s3_int.h"


#define NGX_HTTP_CMS_SWEEP_TIMEOUT  30000       /* a bucket exchange, ms */


/* what runs in a pool thread (an ngx_thread_task_t's handler) */
typedef void (*ngx_http_cms_sweep_work_pt)(void *data, ngx_log_t *log);


/*
 * "method" of root (NULL: the keys' root) + key with "query", signed
 * now, written into cl->request (in cl->pool) as HTTP/<version>: "1.1"
 * for a removal (its connection kept), "1.0" for a listing (its end the
 * connection's, never chunked); then sent to the bucket by the client,
 * which the caller has given its pool, done(), data and action.
 * NGX_OK (done() follows), or NGX_ERROR (nothing sent).
 */
ngx_int_t ngx_http_cms_sweep_start(ngx_http_cms_client_t *cl,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *method, ngx_str_t *root,
    ngx_str_t *key, ngx_str_t *query, const char *version);

/* work(data) in nginx's thread pool, then done(ev) on the event loop,
   ev->data "data"; the task in "pool".  NGX_OK or NGX_ERROR. */
ngx_int_t ngx_http_cms_sweep_post(ngx_http_cms_main_conf_t *mcf,
    ngx_pool_t *pool, ngx_http_cms_sweep_work_pt work,
    ngx_event_handler_pt done, void *data);

/* the orphans' pass (worker 0 of a host with cms_storage) */
void ngx_http_cms_store_orphans_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);
void ngx_http_cms_store_orphans_exit_process(void);


#endif /* _NGX_HTTP_CMS_STORE_SWEEP_H_INCLUDED_ */
