
/*
 * CPU-heavy work (password hashing, HTML sanitizing) in nginx's thread
 * pool, so the event loop never spends it; per worker, each kind of work
 * in a lane of its own with a bounded number running and a bounded queue.
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


/* a queued job: what runs in the thread and on the event loop around it */
typedef struct {
    ngx_http_cms_thread_work_pt     work;
    /*
     * NULL, or called on the event loop when the job's turn comes, just
     * before it is posted (allocate there what only a running job needs);
     * NGX_OK, or a handler code that ends the request instead
     */
    ngx_http_cms_thread_done_pt     start;
    ngx_http_cms_thread_done_pt     done;
} ngx_http_cms_thread_job_t;


/* per-worker counters of a lane */
typedef struct {
    ngx_uint_t                      jobs;       /* at most running */
    ngx_uint_t                      queue;      /* at most waiting */
    ngx_uint_t                      running;
    ngx_uint_t                      queued;
    ngx_uint_t                      held;       /* places reserved */
    ngx_uint_t                      started;    /* since the worker began */
    ngx_uint_t                      refused;    /* since the worker began */
} ngx_http_cms_thread_stats_t;


typedef enum {
    NGX_HTTP_CMS_LANE_PASSWORD = 0,
    NGX_HTTP_CMS_LANE_SANITIZE,
    NGX_HTTP_CMS_LANE_IMAGE,
    NGX_HTTP_CMS_LANES
} ngx_http_cms_thread_lane_e;


/* Sizes the lanes from cms_password_, cms_sanitize_, cms_image_jobs/_queue */
ngx_int_t ngx_http_cms_thread_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);

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

/*
 * The same in a lane: the job runs at once when fewer than the lane's
 * "jobs" run, else waits in its queue, first come first served (a client
 * that leaves gives its place up).  Returns NGX_DONE, NGX_ERROR, or
 * NGX_BUSY when the queue is full: nothing was queued, and the caller
 * answers 503 (never an unbounded wait).
 */
ngx_int_t ngx_http_cms_thread_queue(ngx_http_request_t *r, ngx_uint_t lane,
    ngx_http_cms_thread_job_t *job, void *data);

/*
 * Holds a place in the lane for a job the request will queue after some
 * I/O (a login holds one before its database lookup, so that a flood is
 * refused before it costs queries).  Returns NGX_OK (the request's next
 * ngx_http_cms_thread_queue() on this lane takes the place; the end of
 * the request gives it back if it never does), NGX_BUSY when the lane is
 * full (the caller answers 503), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_thread_reserve(ngx_http_request_t *r,
    ngx_uint_t lane);

void ngx_http_cms_thread_stats(ngx_uint_t lane,
    ngx_http_cms_thread_stats_t *st);


/* one HTML value of a write and its sanitized copy (cms_sanitize()) */
typedef struct {
    void                           *tag;      /* the caller's */
    const char                     *in;
    size_t                          in_len;
    char                           *out;
    size_t                          out_size;
    size_t                          out_len;
    int                             rc;       /* CMS_SANITIZE_* */
} ngx_http_cms_html_t;

/*
 * Sanitizes every ngx_http_cms_html_t of "html" (in r->pool) in one job
 * of the sanitize lane (their output buffers made when its turn comes),
 * then done(r, ctx, data) on the event loop with each rc and copy set.
 * Returns what ngx_http_cms_thread_queue() returns (NGX_BUSY: answer 503).
 */
ngx_int_t ngx_http_cms_thread_html(ngx_http_request_t *r, ngx_array_t *html,
    ngx_http_cms_thread_done_pt done, void *data);


#endif /* _NGX_HTTP_CMS_THREAD_H_INCLUDED_ */
