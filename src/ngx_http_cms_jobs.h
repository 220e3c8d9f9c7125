
/*
 * Periodic background work of the workers (purging soft-deleted content,
 * the outbox relay, announcing scheduled articles whose time came).
 */


#ifndef _NGX_HTTP_CMS_JOBS_H_INCLUDED_
#define _NGX_HTTP_CMS_JOBS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_module.h"


/* Arms the timers; worker 0 alone runs them.  NGX_OK or NGX_ERROR. */
ngx_int_t ngx_http_cms_jobs_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);

/* whether this process runs the jobs: worker 0 (or the only process) of
   a host with cms_postgres */
ngx_uint_t ngx_http_cms_jobs_here(ngx_http_cms_main_conf_t *mcf);

/* a job's timer armed "after" from now (again), unless the worker quits
   or the job was never armed */
void ngx_http_cms_jobs_next(ngx_event_t *ev, ngx_msec_t after);


#endif /* _NGX_HTTP_CMS_JOBS_H_INCLUDED_ */
